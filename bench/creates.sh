#!/usr/bin/env bash
# Creates per second with durable enqueue (the audio row and its River job
# committed in one transaction before the answer), through `narrator serve
# --role api` on SQLite and on PostgreSQL, against a bare net/http handler
# measured in the same run (bench/load creates).
#   bench/creates.sh [SECONDS] [CLIENTS]   (default 10 s, 8 clients)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
source scripts/services.sh
dir=$(mktemp -d)
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
  "$dir/load" creates -base "http://$addr" -project "$pid" -key "$key" -seconds "${1:-10}" -clients "${2:-8}" -label "${db%%:*}"
  kill "${_service_pids[-1]}"
done
