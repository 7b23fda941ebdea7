#!/usr/bin/env bash
# Latency of the reads behind GET one audio, list page 1, list page 1,000,
# the projects list (with audio_count) and the podcast feed (300 items), on
# a project of 10^3, 10^5 and 10^6 audios, on SQLite and on PostgreSQL (a
# private server this script starts). Goal: page 1, GET one, the projects
# list and the feed flat, under 20 ms at 10^6. Prints Go benchmark lines (ns/op) and a summary in milliseconds.
#   bench/archive.sh [LARGEST]   (default 1e6)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
source scripts/services.sh
dir=$(mktemp -d)
trap 'stop_services; rm -rf "$dir"' EXIT
start_postgres "$dir/pg"
export TEST_POSTGRES_URL=$PG_URL NARRATOR_BENCH_ARCHIVE=${1:-1e6}
for pkg in sqlite postgres; do
  go test -run '^$' -bench '^BenchmarkArchive$' -benchtime 200x "./internal/$pkg/" | tee "$dir/$pkg.txt" |
    awk -v store="$pkg" '/^BenchmarkArchive\// { split($1, p, "/"); printf "%-8s %-14s %-20s %8.2f ms\n", store, p[2], p[3], $3 / 1e6 }'
done
