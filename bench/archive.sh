#!/usr/bin/env bash
# Latency of the reads behind GET one audio, list pages 1, 1,000 and 19,999
# (each call a distinct request, so that no cache answers it), the projects
# list (with audio_count) and the podcast feed (300 items), on a project of
# 10^3, 10^5 and 10^6 audios, on SQLite and on PostgreSQL (a private server
# this script starts). Goals at 10^6: page 1, GET one, the projects list and
# the feed under 20 ms; page 19,999 within 3x page 1's median. Prints Go
# benchmark lines (ns/op), a summary of medians in milliseconds, and for
# each size the ratio of page 1,000's and page 19,999's median to page 1's.
#   bench/archive.sh [LARGEST]   (default 1e6)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/prelude.sh
start_postgres "$dir/pg"
export TEST_POSTGRES_URL=$PG_URL NARRATOR_BENCH_ARCHIVE=${1:-1e6}
for pkg in sqlite postgres; do
  go test -run '^$' -bench '^BenchmarkArchive$' -benchtime 200x "./internal/$pkg/" | tee "$dir/$pkg.txt" |
    awk -v store="$pkg" '
      /^BenchmarkArchive\// {
        split($1, p, "/"); sub(/-[0-9]+$/, "", p[3]); med = ""
        for (i = 4; i < NF; i++) if ($(i + 1) == "median-ns/op") med = $i
        printf "%-8s %-14s %-20s %8.3f ms median %8.3f ms mean\n", store, p[2], p[3], med / 1e6, $3 / 1e6
        m[p[2], p[3]] = med; sizes[p[2]] = 1
      }
      END {
        for (s in sizes) {
          one = m[s, "list_page_1"]
          if (one == "" || one == 0) continue
          for (i = 1; i <= 2; i++) {
            deep = i == 1 ? "list_page_1000" : "list_page_19999"
            # Only where the deep page holds audios: page p needs (p-1)*50+1.
            if (m[s, deep] != "" && substr(s, 8) + 0 > (i == 1 ? 999 : 19998) * 50) printf "%-8s %-14s %-20s %8.2f x page 1\n", store, s, deep, m[s, deep] / one
          }
        }
      }'
done
