#!/usr/bin/env bash
# What synchronous=FULL costs through HTTP: creates per second of
# `narrator serve --role api` on SQLite built from this tree, against the
# same server built from BASELINE (a revision that still ran
# synchronous=NORMAL; default a7ca681), alternating which goes first,
# ROUNDS rounds (bench/load creates). The in-process comparison of the two
# settings is BenchmarkCreatesSynchronous (internal/sqlite).
#   bench/durability.sh [CLIENTS] [ROUNDS] [BASELINE]   (default 8 clients, 3 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-8} rounds=${2:-3} baseline=${3:-a7ca681}
source bench/prelude.sh
go build -o "$dir/narrator-full" ./cmd/narrator
go build -o "$dir/load" ./bench/load
mkdir "$dir/baseline"
git archive "$baseline" | tar -x -C "$dir/baseline"
(cd "$dir/baseline" && go build -o "$dir/narrator-normal" ./cmd/narrator)

for round in $(seq "$rounds"); do
  order="normal full"
  (( round % 2 )) || order="full normal"
  for mode in $order; do
    bin="$dir/narrator-$mode" data="$dir/data-$round-$mode"
    acct=$("$bin" accounts create --data "$data" --name Bench)
    key=$(sed -E 's/.*"api_key":"([^"]+)".*/\1/' <<<"$acct")
    id=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$acct")
    proj=$("$bin" projects create --data "$data" --account "$id" --title B --language en_US)
    pid=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$proj")
    addr="127.0.0.1:$(free_port)"
    "$bin" serve --data "$data" --role api --addr "$addr" >"$data.log" 2>&1 &
    _service_pids+=($!)
    _wait_for 100 narrator curl -fsS "http://$addr/healthz"
    "$dir/load" creates -base "http://$addr" -project "$pid" -key "$key" -seconds 10 -clients "$clients" -label "round $round, synchronous=${mode^^}"
    kill "${_service_pids[-1]}"
    wait "${_service_pids[-1]}" || true
  done
done
