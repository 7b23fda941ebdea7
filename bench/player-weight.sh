#!/usr/bin/env bash
# The embedded player's weight, gzipped as a server would send it (gzip's
# default level), beside its budget (the loader at most 5 KB, the player's
# script and styles at most 30 KB; TestWeightBudget asserts them with the
# player page too), as a ratio of the budget.
#   bench/player-weight.sh
set -euo pipefail
cd "$(dirname "$0")/../internal/player/static"
fail=0
report() { # NAME BUDGET FILE...
  local name=$1 budget=$2 raw gz
  shift 2
  raw=$(cat "$@" | wc -c)
  gz=$(for f in "$@"; do gzip -c "$f"; done | wc -c)
  printf '%-7s %6d B raw  %6d B gzipped  budget %6d B  %.2f of budget\n' "$name" "$raw" "$gz" "$budget" "$(echo "$gz / $budget" | bc -l)"
  if (( gz > budget )); then fail=1; fi
}
report loader 5000 embed.js
report player 30000 player.js player.css
exit $fail
