#!/usr/bin/env bash
# The quickstart's second command: installs what the tests need and runs the
# whole suite, with nothing skipped. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh test
export PATH="$PATH:/usr/local/go/bin"
export NARRATOR_TEST_FULL=1 # tests fail instead of skipping when a tool is missing
NARRATOR_ONNXRUNTIME=$(scripts/deps.sh onnxruntime) # the neural voices' runtime, cached
export NARRATOR_ONNXRUNTIME

echo "== PostgreSQL and the S3 server (versitygw)"
source scripts/services.sh
services=$(mktemp -d)
trap 'stop_services; rm -rf "$services"' EXIT
start_postgres "$services/pg"
start_versitygw "$services/s3"
export TEST_POSTGRES_URL=$PG_URL TEST_S3_URL=$S3_URL

echo "== gofmt, go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n "$unformatted" ]]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...

echo "== go test (race detector on the concurrent packages)"
go test -race -count=1 -timeout 15m ./internal/jobs/... ./internal/pipeline/... ./internal/sqlite/... ./internal/postgres/... ./internal/storetest/... ./internal/s3/... ./internal/web/... ./internal/localfs/... ./internal/festival/... ./internal/flite/... ./internal/espeak/... ./internal/proc/... ./internal/mp3/... ./internal/pcm/...

echo "== go test (everything, including the end-to-end and browser tests)"
go test -count=1 -timeout 20m -tags e2e ./...
echo "Dashboard screenshots from the browser tests: $(pwd)/artifacts/screenshots/"
