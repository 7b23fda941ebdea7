#!/usr/bin/env bash
# The API beside its bare baselines, on SQLite, in one run:
#   1. wrk on loopback: GET one audio and the list's first page through
#      `narrator serve --role api`, against a bare net/http handler that
#      encodes the same JSON (bench/load bare), and their ratio (goal ≥ 0.5);
#   2. creates per second with durable enqueue against a bare handler
#      (bench/load creates; goal ≥ 2,000/s);
#   3. the same while `narrator serve` synthesises articles with the real
#      default voice on every core: p50/p99 of GET one and the list (goal
#      p50 < 5 ms), wrk's GET one, and creates per second.
# The machine is shared: every figure is printed beside a baseline taken in
# the same minute.
#   bench/api.sh [SECONDS] [CONNECTIONS]   (default 10 s, 16 connections)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
secs=${1:-10} conns=${2:-16}
source scripts/services.sh
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }
dir=$(mktemp -d)
trap 'stop_services; rm -rf "$dir"' EXIT
go build -o "$dir/narrator" ./cmd/narrator
go build -o "$dir/load" ./bench/load

# rps URL: wrk's requests per second, failing on any non-2xx answer.
rps() {
  local out
  out=$(wrk -t2 -c"$conns" -d"${secs}s" "$1")
  if grep -q "Non-2xx" <<<"$out"; then
    echo "wrk $1: non-2xx answers" >&2
    echo "$out" >&2
    return 1
  fi
  awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$out"
}

# compare NAME URL BARE_URL: wrk against both, bare first, and the ratio.
compare() {
  local bare api
  bare=$(rps "$3")
  api=$(rps "$2")
  awk -v n="$1" -v a="$api" -v b="$bare" \
    'BEGIN { printf "%-22s %7d req/s  (bare net/http handler, same JSON: %7d req/s)  ratio %.2f\n", n, a, b, a / b }'
}

# bare LIKE_URL: starts a bare handler answering what LIKE_URL answers; sets BARE.
bare() {
  "$dir/load" bare -like "$1" >"$dir/bare.out" 2>&1 &
  _service_pids+=($!)
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
  "$dir/narrator" serve --data "$data" --database "$db" --role "$1" --addr "$addr" >>"$dir/serve.log" 2>&1 &
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
bare "$BASE$one"; bare_one=$BARE
bare "$BASE$list"; bare_list=$BARE
compare "GET one audio" "$BASE$one" "$bare_one"
compare "list page 1 (50)" "$BASE$list" "$bare_list"
"$dir/load" creates -base "$BASE" -project "$pid" -key "$key" -seconds "$secs" -clients "$conns" -label "sqlite"
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true

echo "== while synthesis runs: narrator serve (all roles), real engines, default voice"
serve all
for i in $(seq 1 4); do
  "$dir/load" drain -base "$BASE" -project "$pid" -key "$key" -audios 1 -sentences 400 -label "background $i" >"$dir/drain$i.out" 2>&1 &
  _service_pids+=($!)
done
sleep 5 # the engines start and take both cores
"$dir/load" latency -base "$BASE" -project "$pid" -key "$key" -ref 30 -n 300 -label "busy"
compare "GET one audio (busy)" "$BASE$one" "$bare_one"
compare "list page 1 (busy)" "$BASE$list" "$bare_list"
"$dir/load" creates -base "$BASE" -project "$pid" -key "$key" -seconds "$secs" -clients "$conns" -label "sqlite, busy"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
