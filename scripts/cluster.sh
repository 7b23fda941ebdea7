#!/usr/bin/env bash
# Starts a Narrator cluster on this machine, the way production runs one:
# a private PostgreSQL (data and River jobs), versitygw (S3-compatible
# media), three narrator nodes (one api, two worker) and haproxy in front.
# It prints the base URL, a demo API key and a curl, like serve.sh, and
# runs until Ctrl-C, which stops everything.
#   NARRATOR_CLUSTER_PORT   the balancer's port (default 8080)
#   NARRATOR_CLUSTER_DIR    where everything lives (default a new temp dir)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh cluster
export PATH="$PATH:/usr/local/go/bin"
go build -o bin/narrator ./cmd/narrator

source scripts/services.sh
dir=${NARRATOR_CLUSTER_DIR:-$(mktemp -d)}
mkdir -p "$dir"
port=${NARRATOR_CLUSTER_PORT:-8080}
public="http://127.0.0.1:$port"

echo "Starting PostgreSQL and versitygw in $dir" >&2
start_postgres "$dir/pg"
start_versitygw "$dir/s3"
psql "$PG_URL" -qc "CREATE DATABASE narrator"
db=${PG_URL/\/postgres\?/\/narrator?}
backends=(--database "$db" --media "$S3_URL")

bin/narrator demo "${backends[@]}" --data "$dir/demo" --public-url "$public"

# node ROLE NAME: starts a node with its own data directory and port, and
# sets addr to its address.
node() {
  local role=$1 name=$2
  addr="127.0.0.1:$(free_port)"
  bin/narrator serve "${backends[@]}" --data "$dir/$name" --role "$role" \
    --addr "$addr" --public-url "$public" --trusted-proxies 127.0.0.1 >"$dir/$name.log" 2>&1 &
  _service_pids+=($!)
  _wait_for 300 "node $name" curl -fsS "http://$addr/healthz" || { tail "$dir/$name.log" >&2; exit 1; }
}
node api api1
api=$addr
node worker worker1
node worker worker2

# haproxy buffers what it can of each request body before it connects to
# a node (option http-buffer-request, up to tune.bufsize), gives a client
# 10 s for its headers and that part of its body, and caps each client
# address at 32 connections and 200 requests in 10 s (docs/operations.md,
# "Hardening"). It adds X-Forwarded-For, which the api node trusts from it.
cat >"$dir/haproxy.cfg" <<CFG
global
	maxconn 1024
	tune.bufsize 65536
defaults
	mode http
	timeout connect 5s
	timeout client 120s
	timeout server 120s
	timeout http-request 10s
	option http-buffer-request
	option forwardfor
	retries 2
	option redispatch
frontend narrator
	bind 127.0.0.1:$port
	stick-table type ipv6 size 100k expire 30s store conn_cur,http_req_rate(10s)
	tcp-request connection track-sc0 src
	tcp-request connection reject if { sc_conn_cur(0) gt 32 }
	http-request deny deny_status 429 if { sc_http_req_rate(0) gt 200 }
	http-request deny deny_status 404 if { path /metrics }
	default_backend api
backend api
	balance roundrobin
	option httpchk GET /healthz
	server api1 $api check inter 1s
CFG
haproxy -db -f "$dir/haproxy.cfg" >"$dir/haproxy.log" 2>&1 &
_service_pids+=($!)
_wait_for 100 haproxy curl -fsS "$public/healthz"

cat <<MSG

The cluster serves at $public (haproxy → api node $api; two worker nodes).
Logs are in $dir/*.log. Add nodes with the same --database, --media and
--public-url, for example (with the AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY of this S3 server):
  bin/narrator serve --database '$db' --media '$S3_URL' --role worker --data $dir/worker3 --addr 127.0.0.1:0
Ctrl-C stops everything.
MSG
wait
