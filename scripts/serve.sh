#!/usr/bin/env bash
# The quickstart's first command: installs what is missing, builds, fetches a neural voice if
# it can (below), makes a demo account and project (printing a fresh key and a curl), and
# serves. Flags are passed to `narrator serve`, except --no-neural; NARRATOR_DATA,
# NARRATOR_ADDR and NARRATOR_PUBLIC_URL configure it too.
#
# The neural voice: onnxruntime (from npm) and the demo language's recommended Piper voice
# (from NARRATOR_VOICES_URL, default Hugging Face), installed as `narrator voices download`
# does and so the new demo project's default, if both answer within seconds; otherwise the
# built-in voices speak and one line says how to add a neural voice later. --no-neural or
# NARRATOR_NO_NEURAL=1 skips the attempt; what is installed is never fetched again.
set -euo pipefail
cd "$(dirname "$0")/.."

args=()
for a in "$@"; do
  if [[ $a == --no-neural ]]; then export NARRATOR_NO_NEURAL=1; else args+=("$a"); fi
done
no_neural=${NARRATOR_NO_NEURAL:-}
[[ $no_neural == 0 ]] && no_neural=

scripts/deps.sh runtime
export PATH="$PATH:/usr/local/go/bin"
if [[ -z $no_neural && -z "${NARRATOR_ONNXRUNTIME:-}" ]] && ort=$(scripts/deps.sh onnxruntime quick) && [[ -f $ort ]]; then
  export NARRATOR_ONNXRUNTIME=$ort
fi
go build -o bin/narrator ./cmd/narrator

export NARRATOR_DATA="${NARRATOR_DATA:-./narrator-data}"
bin/narrator voices setup-default
bin/narrator demo
exec bin/narrator serve "${args[@]}"
