#!/usr/bin/env bash
# overlap.sh counts what the two stores hold word for word: the substantive
# lines of internal/postgres (its non-test Go files, subpackages included;
# each line trimmed; comments and lines under 25 characters left out)
# that also stand, trimmed, in a non-test Go file of internal/sqlite. It
# prints "overlap TOTAL-SUBSTANTIVE SHARED", or with -v the shared lines.
# The stores should differ only in dialect (docs/architecture.md, "The write
# path"); issue 19 asks for at most 150 shared lines.
set -euo pipefail
cd "$(dirname "$0")/.."

# substantive DIR prints the substantive lines of DIR's non-test Go files.
substantive() {
  find "$1" -name '*.go' ! -name '*_test.go' -print0 | sort -z | xargs -0 cat |
    sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' |
    grep -v '^//' | awk 'length($0) >= 25'
}

pg=$(mktemp) sq=$(mktemp)
trap 'rm -f "$pg" "$sq"' EXIT
substantive internal/postgres >"$pg"
substantive internal/sqlite | sort -u >"$sq"
if [[ "${1:-}" == -v ]]; then
  grep -Fxf "$sq" "$pg" || true
  exit 0
fi
echo "overlap $(wc -l <"$pg") $(grep -cFxf "$sq" "$pg" || true)"
