#!/usr/bin/env bash
# A library of the servers that the tests, the benchmarks and cluster.sh
# start on this machine, each in a directory of its own, on a free loopback
# port, stopped when the calling script exits. Source it, then call:
#   start_postgres DIR   a private PostgreSQL 15 cluster (Debian's postgresql);
#                        sets PG_URL, a superuser URL to its "postgres" database;
#                        fsync off unless PG_EXTRA_OPTS (more "-c name=value"
#                        server options, which win) turns it on
#   start_versitygw DIR  versitygw, an S3 server, on DIR with a bucket "narrator";
#                        sets S3_URL and exports AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY
#   free_port            prints a free loopback TCP port
# stop_services runs on EXIT; a caller with its own EXIT trap calls it there.

VERSITYGW_VERSION=v1.8.0
PG_BIN=/usr/lib/postgresql/15/bin
_service_pids=()
_pg_data=""

free_port() {
  local port
  for _ in $(seq 1 200); do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

# _wait_for TRIES DESCRIPTION COMMAND...: retries COMMAND every 0.2 s.
_wait_for() {
  local tries=$1 what=$2
  shift 2
  for _ in $(seq 1 "$tries"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "$what did not come up" >&2
  return 1
}

stop_services() {
  if [[ -n "$_pg_data" ]]; then
    _as_postgres "$PG_BIN/pg_ctl" -D "$_pg_data" -m immediate stop >/dev/null 2>&1 || true
    _pg_data=""
  fi
  local pid
  for pid in "${_service_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${_service_pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  _service_pids=()
}
trap stop_services EXIT

# _as_postgres runs a PostgreSQL program as the postgres user when root
# (initdb refuses root), else as the current user.
_as_postgres() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start_postgres() {
  local dir=$1 port
  port=$(free_port) || return 1
  mkdir -p "$dir"
  if [[ $(id -u) -eq 0 ]]; then
    chown postgres "$dir"
    # The postgres user must reach DIR: let it through the parents (a
    # mktemp -d directory is closed to others).
    local d=$dir
    while d=$(dirname "$d") && [[ "$d" != / ]]; do chmod a+x "$d"; done
  fi
  _as_postgres "$PG_BIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; return 1; }
  # fsync off: these clusters hold test and benchmark data only.
  _as_postgres "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 ${PG_EXTRA_OPTS:-}" \
    start >/dev/null || { cat "$dir/postgres.log" >&2; return 1; }
  _pg_data="$dir/data"
  PG_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  _wait_for 100 PostgreSQL psql "$PG_URL" -c 'SELECT 1' || return 1
  export PG_URL
}

# versitygw_bin prints the versitygw binary, building it once (about two
# minutes) into the cache.
versitygw_bin() {
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/narrator/bin"
  # go install stamps no version into the binary; the marker file says
  # which version the cached one is.
  if [[ ! -x "$cache/versitygw" || "$(cat "$cache/versitygw.version" 2>/dev/null)" != "$VERSITYGW_VERSION" ]]; then
    echo "Building versitygw $VERSITYGW_VERSION (once; cached in $cache)" >&2
    mkdir -p "$cache"
    GOBIN="$cache" go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" >&2 || return 1
    echo "$VERSITYGW_VERSION" >"$cache/versitygw.version"
  fi
  echo "$cache/versitygw"
}

start_versitygw() {
  local dir=$1 port bin
  bin=$(versitygw_bin) || return 1
  port=$(free_port) || return 1
  mkdir -p "$dir/s3"
  export AWS_ACCESS_KEY_ID=narrator AWS_SECRET_ACCESS_KEY=narrator-secret-key
  ROOT_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID ROOT_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY \
    "$bin" --port "127.0.0.1:$port" --health /health -q posix "$dir/s3" >"$dir/versitygw.log" 2>&1 &
  _service_pids+=($!)
  _wait_for 100 versitygw curl -fsS "http://127.0.0.1:$port/health" || { cat "$dir/versitygw.log" >&2; return 1; }
  # The SHA-256 of the empty body, which S3 wants named.
  curl -fsS -X PUT -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    "http://127.0.0.1:$port/narrator" >/dev/null || { echo "creating the bucket failed" >&2; return 1; }
  S3_URL="s3://narrator?endpoint=http://127.0.0.1:$port&region=us-east-1&path_style=true"
  export S3_URL
}
