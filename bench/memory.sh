#!/usr/bin/env bash
# Peak memory of `narrator serve` (VmHWM in /proc/PID/status: the process
# alone, not its engine processes) while it processes one article of
# 10,000 characters and then one of 100,000, each on a fresh server and
# data directory, beside the same server's peak after start-up with nothing
# to do: the baseline. Flat means the 100,000-character article costs no
# more than the 10,000-character one. The engines' own resident memory at
# its highest sample is printed beside.
#   bench/memory.sh [--engine-standin DURATION]   (default: the real engines)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/prelude.sh
go build -o "$dir/narrator" ./cmd/narrator

# article CHARS: a JSON create body of distinct sentences, about CHARS long.
article() {
  awk -v n="$1" 'BEGIN {
    printf "{\"title\":\"Memory\",\"body\":\""
    for (i = 1; len < n - 200; i++) {
      s = sprintf("<p>Report %d: the council met on a quiet evening and agreed on a plan for harbour number %d.</p>", i, i)
      printf "%s", s; len += length(s)
    }
    printf "\"}"
  }'
}

# kib PID FIELD: a field of /proc/PID/status in KiB.
kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# children_rss PID: the summed resident KiB of PID's descendants.
children_rss() {
  local sum=0 c
  for c in $(pgrep -P "$1" || true); do
    sum=$((sum + $(kib "$c" VmRSS) + $(children_rss "$c")))
  done
  echo "$sum"
}

run() {
  local chars=$1 data="$dir/data-$1" db="sqlite:$dir/db-$1/narrator.db"
  shift
  local acct key id proj pid addr server idle peak engines=0 e state="" start
  acct=$("$dir/narrator" accounts create --data "$data" --database "$db" --name Bench)
  key=$(sed -E 's/.*"api_key":"([^"]+)".*/\1/' <<<"$acct")
  id=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$acct")
  proj=$("$dir/narrator" projects create --data "$data" --database "$db" --account "$id" --title B --language en_US)
  pid=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$proj")
  addr="127.0.0.1:$(free_port)"
  "$dir/narrator" serve --data "$data" --database "$db" --addr "$addr" "$@" >"$dir/serve-$chars.log" 2>&1 &
  server=$!
  _service_pids+=($server)
  _wait_for 300 narrator curl -fsS "http://$addr/healthz"
  sleep 2
  idle=$(kib "$server" VmHWM)
  article "$chars" >"$dir/article-$chars.json"
  start=$(date +%s)
  curl -fsS -o /dev/null "http://$addr/api/v3/projects/$pid/audio" -H "Authorization: Bearer $key" --data-binary "@$dir/article-$chars.json"
  while [[ "$state" != processed ]]; do
    sleep 0.5
    e=$(children_rss "$server")
    ((e > engines)) && engines=$e
    state=$(curl -fsS "http://$addr/api/v3/projects/$pid/audio/1?api_key=$key" | sed -E 's/.*"state":"([a-z]+)".*/\1/')
    if [[ "$state" == failed ]]; then echo "the article failed" >&2; return 1; fi
  done
  peak=$(kib "$server" VmHWM)
  printf "%7d characters: narrator serve peak %6.1f MiB (idle after start %6.1f MiB, +%5.1f MiB); engines at most %6.1f MiB; processed in %d s\n" \
    "$chars" "$(bc -l <<<"$peak/1024")" "$(bc -l <<<"$idle/1024")" "$(bc -l <<<"($peak-$idle)/1024")" "$(bc -l <<<"$engines/1024")" $(($(date +%s) - start))
  kill "$server"
  wait "$server" 2>/dev/null || true
}

run 10000 "$@"
run 100000 "$@"
