#!/usr/bin/env bash
# Synthesis throughput with 1, 2 and 4 worker nodes on PostgreSQL and
# versitygw, behind one api node. This machine has 2 cores, so the engines
# are replaced by a stand-in that waits per sentence without using the CPU
# (--engine-standin): the figures show how throughput grows with nodes, as
# it would with real engines on machines of their own.
#   bench/cluster.sh [PER_SENTENCE] [AUDIOS] [SENTENCES]   (default 1s 40 8)
set -euo pipefail
cd "$(dirname "$0")/.."
per=${1:-1s} audios=${2:-40} sentences=${3:-8}
source bench/prelude.sh
go build -o "$dir/narrator" ./cmd/narrator
go build -o "$dir/load" ./bench/load
start_postgres "$dir/pg"
start_versitygw "$dir/s3"

echo "stand-in: $per per sentence; $audios audios of $sentences sentences; each worker --jobs 2 --unit-workers 4"
for workers in 1 2 4; do
  psql "$PG_URL" -qc "CREATE DATABASE bench$workers"
  db=${PG_URL/\/postgres\?/\/bench$workers?}
  media="${S3_URL/narrator?/narrator/bench$workers?}"
  b=(--database "$db" --media "$media")
  acct=$("$dir/narrator" accounts create "${b[@]}" --data "$dir/cli" --name Bench)
  key=$(sed -E 's/.*"api_key":"([^"]+)".*/\1/' <<<"$acct")
  id=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$acct")
  proj=$("$dir/narrator" projects create "${b[@]}" --data "$dir/cli" --account "$id" --title B --language en_US)
  pid=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$proj")
  pids=()
  addr="127.0.0.1:$(free_port)"
  "$dir/narrator" serve "${b[@]}" --data "$dir/api$workers" --role api --addr "$addr" >"$dir/api$workers.log" 2>&1 &
  pids+=($!)
  for w in $(seq 1 "$workers"); do
    "$dir/narrator" serve "${b[@]}" --data "$dir/w$workers-$w" --role worker --addr "127.0.0.1:0" \
      --engine-standin "$per" --jobs 2 --unit-workers 4 >"$dir/w$workers-$w.log" 2>&1 &
    pids+=($!)
  done
  _service_pids+=("${pids[@]}")
  _wait_for 300 narrator curl -fsS "http://$addr/healthz"
  sleep 2 # the workers' River clients start
  "$dir/load" drain -base "http://$addr" -project "$pid" -key "$key" -audios "$audios" -sentences "$sentences" -label "workers=$workers"
  kill "${pids[@]}"
  wait "${pids[@]}" 2>/dev/null || true
done
