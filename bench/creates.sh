#!/usr/bin/env bash
# Creates per second with durable enqueue (the audio row and its River job
# committed in one transaction before the answer), through `narrator serve
# --role api` on SQLite and on PostgreSQL, against a bare net/http handler
# measured in the same run (bench/load creates), and the CPU time that each
# create cost the server and, on PostgreSQL, the database's processes.
#   bench/creates.sh [SECONDS] [CLIENTS]   (default 10 s, 8 clients)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
source scripts/services.sh
dir=$(mktemp -d)
# cpu_ticks prints the CPU time, user and system, the processes PIDS have
# used, in clock ticks.
cpu_ticks() {
  local t=0 p
  for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
  echo "$t"
}
trap 'stop_services; rm -rf "$dir"' EXIT
go build -o "$dir/narrator" ./cmd/narrator
go build -o "$dir/load" ./bench/load
# Durable, as SQLite's synchronous=FULL is: a create is answered once its
# commit is on disk.
PG_EXTRA_OPTS="-c fsync=on -c synchronous_commit=on -c full_page_writes=on" start_postgres "$dir/pg"
psql "$PG_URL" -qc "CREATE DATABASE bench"
pg=${PG_URL/\/postgres\?/\/bench?}

for db in "sqlite:$dir/sqlite/narrator.db" "$pg"; do
  data="$dir/data-$RANDOM"
  acct=$("$dir/narrator" accounts create --data "$data" --database "$db" --name Bench)
  key=$(sed -E 's/.*"api_key":"([^"]+)".*/\1/' <<<"$acct")
  id=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$acct")
  proj=$("$dir/narrator" projects create --data "$data" --database "$db" --account "$id" --title B --language en_US)
  pid=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$proj")
  addr="127.0.0.1:$(free_port)"
  # No queue limit: an api node queues every create, and the run makes thousands.
  "$dir/narrator" serve --data "$data" --database "$db" --role api --addr "$addr" --max-queued-per-account 0 >"$data.log" 2>&1 &
  _service_pids+=($!)
  _wait_for 100 narrator curl -fsS "http://$addr/healthz"
  # CPU of the server, and of PostgreSQL's processes, over the run.
  pids=("${_service_pids[-1]}")
  [[ $db == postgres* ]] && pids+=($(head -1 "$dir/pg/data/postmaster.pid") $(pgrep -P "$(head -1 "$dir/pg/data/postmaster.pid")"))
  before=$(cpu_ticks "${pids[0]}") before_pg=$(cpu_ticks "${pids[@]:1}")
  out=$("$dir/load" creates -base "http://$addr" -project "$pid" -key "$key" -seconds "${1:-10}" -clients "${2:-8}" -label "${db%%:*}")
  echo "$out"
  n=$(sed -E 's/.*; ([0-9]+) creates.*/\1/' <<<"$out")
  per_create() { echo $(( $1 * 1000000 / $(getconf CLK_TCK) / n )); }
  line="  CPU per create (utime + stime, /proc): narrator serve $(per_create $(( $(cpu_ticks "${pids[0]}") - before ))) µs"
  if [[ $db == postgres* ]]; then
    # Backends that started during the run count from zero.
    pids+=($(pgrep -P "$(head -1 "$dir/pg/data/postmaster.pid")"))
    line+=", PostgreSQL $(per_create $(( $(cpu_ticks $(printf '%s\n' "${pids[@]:1}" | sort -u)) - before_pg ))) µs"
  fi
  echo "$line"
  kill "${_service_pids[-1]}"
done
