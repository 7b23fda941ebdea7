#!/usr/bin/env bash
# Creates per second with durable enqueue (the audio row and its River job
# committed in one transaction before the answer), through `narrator serve
# --role api` on SQLite and on PostgreSQL, against a bare net/http handler
# measured in the same run (bench/load creates), and the CPU time that each
# create cost the server and, on PostgreSQL, the database's processes.
#
# This machine's speed drifts within minutes, so the two servers run side
# by side and take turns, ROUNDS times after a warm-up of 3 s each: each
# round measures SQLite, then PostgreSQL. The summary gives each round's
# ratio and their median. Single rounds swing by a quarter either way on
# the 2-core build machine, so the default takes the median of five.
#   bench/creates.sh [SECONDS] [CLIENTS] [ROUNDS]   (default 10 s, 8 clients, 5 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10} clients=${2:-8} rounds=${3:-5}
source bench/prelude.sh
# cpu_ticks prints the CPU time, user and system, the processes PIDS have
# used, in clock ticks.
cpu_ticks() {
  local t=0 p
  for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
  echo "$t"
}
# median prints the median of its arguments, numbers.
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
go build -o "$dir/narrator" ./cmd/narrator
go build -o "$dir/load" ./bench/load
# Durable, as SQLite's synchronous=FULL is: a create is answered once its
# commit is on disk.
PG_EXTRA_OPTS="-c fsync=on -c synchronous_commit=on -c full_page_writes=on" start_postgres "$dir/pg"
pg_pid=$(head -1 "$dir/pg/data/postmaster.pid")
psql "$PG_URL" -qc "CREATE DATABASE bench"

labels=(sqlite postgres)
declare -A db=([sqlite]="sqlite:$dir/sqlite/narrator.db" [postgres]=${PG_URL/\/postgres\?/\/bench?})
declare -A addr key project pid rate
for label in "${labels[@]}"; do
  data="$dir/data-$label"
  acct=$("$dir/narrator" accounts create --data "$data" --database "${db[$label]}" --name Bench)
  key[$label]=$(sed -E 's/.*"api_key":"([^"]+)".*/\1/' <<<"$acct")
  id=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$acct")
  proj=$("$dir/narrator" projects create --data "$data" --database "${db[$label]}" --account "$id" --title B --language en_US)
  project[$label]=$(sed -E 's/.*"id":([0-9]+).*/\1/' <<<"$proj")
  addr[$label]="127.0.0.1:$(free_port)"
  # No queue limit: an api node queues every create, and the run makes thousands.
  "$dir/narrator" serve --data "$data" --database "${db[$label]}" --role api --addr "${addr[$label]}" --max-queued-per-account 0 >"$data.log" 2>&1 &
  _service_pids+=($!)
  pid[$label]=$!
  _wait_for 100 narrator curl -fsS "http://${addr[$label]}/healthz"
done

# A warm-up, not counted: each server's first creates run before its
# connections, caches and (on PostgreSQL) statistics are warm.
for label in "${labels[@]}"; do
  "$dir/load" creates -base "http://${addr[$label]}" -project "${project[$label]}" -key "${key[$label]}" \
    -seconds 3 -clients "$clients" -label "$label warm-up" >/dev/null
done

for round in $(seq 1 "$rounds"); do
  echo "round $round"
  for label in "${labels[@]}"; do
    # CPU of the server, and of PostgreSQL's processes, over the run.
    pg_pids=()
    [[ $label == postgres* ]] && pg_pids=("$pg_pid" $(pgrep -P "$pg_pid"))
    before=$(cpu_ticks "${pid[$label]}") before_pg=$(cpu_ticks "${pg_pids[@]}")
    out=$("$dir/load" creates -base "http://${addr[$label]}" -project "${project[$label]}" -key "${key[$label]}" \
      -seconds "$seconds" -clients "$clients" -label "$label")
    echo "  $out"
    n=$(sed -E 's/.*; ([0-9]+) creates.*/\1/' <<<"$out")
    rate[$label,$round]=$(sed -E 's/^[^ ]+ creates\/s ([0-9]+).*/\1/' <<<"$out")
    per_create() { echo $(( $1 * 1000000 / $(getconf CLK_TCK) / n )); }
    line="    CPU per create (utime + stime, /proc): narrator serve $(per_create $(( $(cpu_ticks "${pid[$label]}") - before ))) µs"
    if [[ $label == postgres* ]]; then
      # Backends that started during the run count from zero.
      pg_pids+=($(pgrep -P "$pg_pid"))
      line+=", PostgreSQL $(per_create $(( $(cpu_ticks $(printf '%s\n' "${pg_pids[@]}" | sort -u)) - before_pg ))) µs"
    fi
    echo "$line"
  done
done

ratios=()
for round in $(seq 1 "$rounds"); do
  ratios+=("$(awk -v p="${rate[postgres,$round]}" -v s="${rate[sqlite,$round]}" 'BEGIN {printf "%.2f", p / s}')")
done
echo "PostgreSQL ÷ SQLite, creates per second, round by round: ${ratios[*]}; median $(median "${ratios[@]}")"
