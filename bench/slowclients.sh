#!/usr/bin/env bash
# Slow clients against one api node with --max-connections 16: 40 sockets
# from 127.0.0.2-5 each send a sign-in POST's headers and one byte of its
# body, then nothing. Prints the latency of five /healthz from 127.0.0.1
# meanwhile (none answered within 5 s before issue 20's M1 fix), and how
# long the stalled sockets were held (2 min each before; the
# --min-transfer-rate grace now).
#   bench/slowclients.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/prelude.sh
go build -o "$dir/narrator" ./cmd/narrator
port=$(free_port)
"$dir/narrator" serve --data "$dir/data" --role api --addr "127.0.0.1:$port" --max-connections 16 >"$dir/serve.log" 2>&1 &
_service_pids+=($!)
_wait_for 100 narrator curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null
python3 bench/slowclients/drill.py "$port" 40
