#!/usr/bin/env bash
# The quickstart's first command: installs what is missing, builds, makes a
# demo account and project (printing a fresh key and a curl), and serves.
# Flags are passed to `narrator serve`; NARRATOR_DATA, NARRATOR_ADDR and
# NARRATOR_PUBLIC_URL configure it too.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh runtime
export PATH="$PATH:/usr/local/go/bin"
# Neural voices run on onnxruntime, which deps.sh fetched (or not: then
# they are refused and everything else works).
if [[ -z "${NARRATOR_ONNXRUNTIME:-}" ]] && ort=$(scripts/deps.sh onnxruntime 2>/dev/null) && [[ -f $ort ]]; then
  export NARRATOR_ONNXRUNTIME=$ort
fi
go build -o bin/narrator ./cmd/narrator

export NARRATOR_DATA="${NARRATOR_DATA:-./narrator-data}"
bin/narrator demo
exec bin/narrator serve "$@"
