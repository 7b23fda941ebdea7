#!/usr/bin/env bash
# Runs every fuzz target in the repository, one after another, each for the
# given time (default 10m), with one worker so that it shares a small
# machine. Usage: scripts/fuzz.sh [TIME] [TARGET-REGEXP]
#   scripts/fuzz.sh 10m            # all targets, 10 minutes each
#   scripts/fuzz.sh 30s 'Markdown' # the targets whose name matches
# It prints one line per target (PASS or FAIL and the fuzzer's last
# progress line), keeps each run's output in $FUZZ_LOGS (default a temporary
# folder), and exits non-zero if any target failed. A failing input is
# saved by go test under the package's testdata/fuzz/TARGET/: commit it with
# the fix, and plain `go test` replays it from then on.
set -uo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10m}
match=${2:-.}
logs=${FUZZ_LOGS:-$(mktemp -d)}
mkdir -p "$logs"
failed=0
# "package target" pairs, found in the test files.
targets=$(grep -rHoE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+' . |
	sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+)#\1 \2#' | sort)
while read -r pkg target; do
	[[ -z $target ]] && continue
	[[ $target =~ $match ]] || continue
	log="$logs/$target.log"
	start=$(date -u +%FT%TZ)
	if go test "./$pkg" -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -parallel 1 >"$log" 2>&1; then
		result=PASS
	else
		result=FAIL
		failed=1
	fi
	last=$(grep -E '^fuzz: elapsed' "$log" | tail -n1 | sed 's/^fuzz: //')
	printf '%-18s %-20s %s %s %s\n' "$target" "$pkg" "$start" "$result" "$last"
	[[ $result == FAIL ]] && tail -n 20 "$log"
done <<<"$targets"
echo "logs: $logs"
exit $failed
