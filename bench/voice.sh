#!/usr/bin/env bash
# Real-time factor and intelligibility of any Piper voice an operator points
# it at, beside festival's HTS voice (the best built-in one) on the same
# texts, in the same run: each article of bench/testdata/speed is narrated
# by a fresh `narrator serve` with each voice, and each MP3 is scored by
# pocketsphinx (scripts/intelligibility.py; English only).
#   bench/voice.sh VOICE.onnx [--gender female|male] [--articles N]
# VOICE.onnx.json must lie beside VOICE.onnx. NARRATOR_ONNXRUNTIME names the
# onnxruntime library, else scripts/deps.sh onnxruntime fetches it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 || ! -f $1 ]]; then
  echo "usage: bench/voice.sh VOICE.onnx [--gender female|male] [--articles N]" >&2
  exit 2
fi
model=$(realpath "$1")
shift
export PATH="$PATH:/usr/local/go/bin"
exec go run ./bench/neural -model "$model" -score "$@"
