#!/usr/bin/env bash
# The API beside its bare baselines, on SQLite, in one run:
#   1. wrk on loopback: GET one audio and the list's first page through
#      `narrator serve --role api`, against a bare net/http handler that
#      encodes the same JSON (bench/load bare), and their ratio (goal ≥ 0.5);
#   2. creates per second with durable enqueue against a bare handler
#      (bench/load creates; goal ≥ 2,000/s), with the server's CPU per
#      create, and beside a bare SQLite insert transaction (go test -bench
#      BenchmarkCreates ./internal/sqlite, 16 callers);
#   3. the same while `narrator serve` synthesises articles with the real
#      default voice on every core: p50/p99 of GET one and the list (goal
#      p50 < 5 ms), wrk's GET one, and creates per second.
# The machine is shared: every figure is printed beside a baseline taken in
# the same minute.
#   bench/api.sh [SECONDS] [CONNECTIONS]   (default 10 s, 16 connections)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10} conns=${2:-16}
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }
source bench/prelude.sh
go build -o "$dir/narrator" ./cmd/narrator
go build -o "$dir/load" ./bench/load

# cpu PID: the CPU time the process has used, in clock ticks.
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# measure URL PID: runs wrk against URL, failing on any non-2xx answer, and
# prints requests per second and the CPU microseconds that process PID
# spent per request. The second figure does not depend on what else the
# shared machine runs.
measure() {
  local out before after
  before=$(cpu "$2")
  out=$(wrk -t2 -c"$conns" -d"${secs}s" "$1")
  after=$(cpu "$2")
  if grep -q "Non-2xx" <<<"$out"; then
    echo "wrk $1: non-2xx answers" >&2
    echo "$out" >&2
    return 1
  fi
  awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" \
    '/^Requests\/sec:/ { rps = $2 } / requests in / { n = $1 } END { printf "%.0f %.0f", rps, t / hz * 1e6 / n }' <<<"$out"
}

# compare NAME URL BARE_URL BARE_PID: wrk against both, bare first, and the
# ratios of throughput and of CPU per request. While the server
# synthesises (busy=1), its CPU is mostly synthesis: only throughput counts.
busy=0
compare() {
  local bare api
  bare=$(measure "$3" "$4")
  api=$(measure "$2" "$SERVER")
  awk -v n="$1" -v a="$api" -v b="$bare" -v busy=$busy 'BEGIN { split(a, x, " "); split(b, y, " ");
    if (busy) { printf "%-22s %6d req/s  (bare net/http handler, same JSON: %6d req/s)  ratio %.2f\n", n, x[1], y[1], x[1] / y[1]; exit }
    printf "%-22s %6d req/s, %5d µs CPU/req  (bare net/http handler, same JSON: %6d req/s, %4d µs CPU/req)  ratio %.2f, by CPU %.2f\n",
      n, x[1], x[2], y[1], y[2], x[1] / y[1], y[2] / x[2] }'
}

# creates LABEL: bench/load creates against the server, then the server's
# CPU per create, and the creates per second that CPU allows on this
# machine's cores: a figure the shared machine's other load does not move.
creates() {
  local before after out n
  before=$(cpu "$SERVER")
  out=$("$dir/load" creates -base "$BASE" -project "$pid" -key "$key" -seconds "$secs" -clients "$conns" -label "$1")
  after=$(cpu "$SERVER")
  echo "$out"
  n=$(sed -E 's/.*; ([0-9]+) creates\).*/\1/' <<<"$out")
  ((busy)) || awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$n" -v cores="$(nproc)" -v label="$1" \
    'BEGIN { us = t / hz * 1e6 / n; printf "%s server CPU per create %.0f µs: at most %.0f creates/s on %d cores\n", label, us, cores * 1e6 / us, cores }'
}

# bare LIKE_URL: starts a bare handler answering what LIKE_URL answers;
# sets BARE, its URL, and BARE_PID.
bare() {
  "$dir/load" bare -like "$1" >"$dir/bare.out" 2>&1 &
  _service_pids+=($!)
  BARE_PID=$!
  _wait_for 50 "bare handler" grep -q 127.0.0.1 "$dir/bare.out"
  BARE="http://$(head -1 "$dir/bare.out")"
}

data="$dir/data" db="sqlite:$dir/narrator.db"
acct=$("$dir/narrator" accounts create --data "$data" --database "$db" --name Bench)
key=$(sed -E 's/.*"api_key":"([^"]+)".*/\1/' <<<"$acct")
id=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$acct")
proj=$("$dir/narrator" projects create --data "$data" --database "$db" --account "$id" --title B --language en_US)
pid=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$proj")

# serve ROLE: starts narrator serve on a free port; sets BASE and SERVER.
serve() {
  local addr="127.0.0.1:$(free_port)"
  # No queue limit: the create runs queue thousands of audios in one account.
  "$dir/narrator" serve --data "$data" --database "$db" --role "$1" --addr "$addr" --max-queued-per-account 0 >>"$dir/serve.log" 2>&1 &
  SERVER=$!
  _service_pids+=($SERVER)
  _wait_for 300 narrator curl -fsS "http://$addr/healthz"
  BASE="http://$addr"
}

serve api
for i in $(seq 1 60); do
  curl -fsS -o /dev/null "$BASE/api/v3/projects/$pid/audio" -H "Authorization: Bearer $key" \
    -d "{\"title\":\"Seed $i\",\"body\":\"Seed article number $i. It has two sentences.\",\"external_id\":\"seed-$i\",\"metadata\":{\"section\":\"news\"}}"
done
# The paths measured, on the server at $BASE.
one="/api/v3/projects/$pid/audio/30?api_key=$key"
list="/api/v3/projects/$pid/audio?api_key=$key&page=1"

echo "== idle: narrator serve --role api on SQLite; wrk -t2 -c$conns, ${secs} s each"
bare "$BASE$one"; bare_one=("$BARE" "$BARE_PID")
bare "$BASE$list"; bare_list=("$BARE" "$BARE_PID")
compare "GET one audio" "$BASE$one" "${bare_one[@]}"
compare "list page 1 (50)" "$BASE$list" "${bare_list[@]}"
creates sqlite
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
go test -run '^$' -bench '^BenchmarkCreates$' -cpu 16 -benchtime 3s ./internal/sqlite | awk '
  /^BenchmarkCreates\/bare/ { bare = $3 } /^BenchmarkCreates\/store/ { store = $3 }
  END { printf "store creates in process: %.0f/s  (bare SQLite insert transaction, same pragmas and writer: %.0f/s)  ratio %.2f\n", 1e9 / store, 1e9 / bare, bare / store }'

echo "== while synthesis runs: narrator serve (all roles), real engines, default voice"
serve all
for i in $(seq 1 4); do
  "$dir/load" drain -base "$BASE" -project "$pid" -key "$key" -audios 1 -sentences 400 -label "background $i" >"$dir/drain$i.out" 2>&1 &
  _service_pids+=($!)
done
sleep 5 # the engines start and take both cores
busy=1
"$dir/load" latency -base "$BASE" -project "$pid" -key "$key" -ref 30 -n 300 -label "busy"
compare "GET one audio (busy)" "$BASE$one" "${bare_one[@]}"
compare "list page 1 (busy)" "$BASE$list" "${bare_list[@]}"
creates "sqlite, busy"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
