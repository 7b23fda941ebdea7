#!/usr/bin/env bash
# The quickstart's second command: installs what the tests need and runs the
# whole suite, with nothing skipped. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh test
export PATH="$PATH:/usr/local/go/bin"
export NARRATOR_TEST_FULL=1 # tests fail instead of skipping when a tool is missing
STATICCHECK_VERSION=v0.8.2

# stage prints the heading of a stage with the time since the suite started,
# so that a log shows where the minutes go.
stage() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# staticcheck_bin prints the staticcheck binary, building it once (about a
# minute) into the cache, and again when the version or Go changes.
staticcheck_bin() {
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/narrator/bin"
  local built
  built=$(go version -m "$cache/staticcheck" 2>/dev/null | awk 'NR==1{print $2} $1=="mod"{print $3}' | paste -sd' ')
  if [[ "$built" != "$(go env GOVERSION) $STATICCHECK_VERSION" ]]; then
    echo "Building staticcheck $STATICCHECK_VERSION (once; cached in $cache)" >&2
    mkdir -p "$cache"
    GOBIN="$cache" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" >&2 || return 1
  fi
  echo "$cache/staticcheck"
}

SPECTRAL_VERSION=6.16.3

# spectral_bin prints Spectral, the OpenAPI linter, installing it once from
# npm into the cache (not into the repository).
spectral_bin() {
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/narrator/spectral"
  local bin="$cache/node_modules/.bin/spectral"
  if [[ "$("$bin" --version 2>/dev/null)" != "$SPECTRAL_VERSION" ]]; then
    echo "Installing Spectral $SPECTRAL_VERSION from npm (once; cached in $cache)" >&2
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-audit --no-fund --ignore-scripts --loglevel=error \
      "@stoplight/spectral-cli@$SPECTRAL_VERSION" >&2 || return 1
  fi
  echo "$bin"
}

# npm_client PACKAGE VERSION DIR installs an npm package once into DIR, a
# folder of narrator's cache, and prints that folder: real clients that the
# tests drive.
npm_client() {
  local package=$1 version=$2 dir="${XDG_CACHE_HOME:-$HOME/.cache}/narrator/$3"
  if [[ "$(node -p "require('$dir/node_modules/$package/package.json').version" 2>/dev/null)" != "$version" ]]; then
    echo "Installing $package $version from npm (once; cached in $dir)" >&2
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error "$package@$version" >&2 || return 1
  fi
  echo "$dir"
}
# The official openai client, which an end-to-end test drives against the
# OpenAI-convention endpoints (the version is openaiNPMVersion in
# cmd/narrator/openai_e2e_test.go), and Podcast Index's feed parser, which the
# podcast feed's tests read feeds with (partytimeVersion in
# internal/feed/partytime_test.go).
NARRATOR_OPENAI_NPM=$(npm_client openai 5.23.2 openai-npm)
NARRATOR_PARTYTIME=$(npm_client podcast-partytime 5.0.0 partytime)
# axe-core, which the player's browser test runs in every state of the
# player (axeVersion in cmd/narrator/readalong_browser_test.go).
NARRATOR_AXE=$(npm_client axe-core 4.10.3 axe-core)
export NARRATOR_OPENAI_NPM NARRATOR_PARTYTIME NARRATOR_AXE

NARRATOR_ONNXRUNTIME=$(scripts/deps.sh onnxruntime) # the neural voices' runtime, cached
export NARRATOR_ONNXRUNTIME

stage "PostgreSQL and the S3 server (versitygw)"
source scripts/services.sh
services=$(mktemp -d)
trap 'stop_services; rm -rf "$services"' EXIT
start_postgres "$services/pg"
start_versitygw "$services/s3"
export TEST_POSTGRES_URL=$PG_URL TEST_S3_URL=$S3_URL

stage "gofmt, go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n "$unformatted" ]]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...

stage "staticcheck $STATICCHECK_VERSION (without and with the e2e tag)"
staticcheck=$(staticcheck_bin)
"$staticcheck" ./...
"$staticcheck" -tags e2e ./...

stage "Spectral $SPECTRAL_VERSION: the OpenAPI document against spectral:oas (.spectral.yaml)"
spectral=$(spectral_bin)
"$spectral" lint --ruleset .spectral.yaml --fail-severity=warn internal/openapi/openapi.json

stage "WordPress plugin: php -l, phpcs (PSR-12, integrations/wordpress/phpcs.xml.dist), phpunit alone and in a real WordPress"
find integrations/wordpress -name '*.php' -print0 | xargs -0 -n1 php -l >/dev/null
go build -o "$services/narrator" ./cmd/narrator # RealServerTest runs the plugin against it
wp_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
NARRATOR_TEST_URL=http://127.0.0.1:$wp_port
NARRATOR_TEST_KEY=$("$services/narrator" demo --data "$services/wp-narrator" --public-url "$NARRATOR_TEST_URL" | grep -o 'nk_[0-9a-f]\{64\}' | head -1)
"$services/narrator" serve --data "$services/wp-narrator" --addr "127.0.0.1:$wp_port" --public-url "$NARRATOR_TEST_URL" >"$services/wp-narrator.log" 2>&1 &
wp_narrator=$!
for _ in $(seq 1 100); do curl -sf "$NARRATOR_TEST_URL/healthz" >/dev/null && break; sleep 0.2; done
wp_ok=0
(cd integrations/wordpress && phpcs -q && phpunit &&
  NARRATOR_TEST_URL=$NARRATOR_TEST_URL NARRATOR_TEST_KEY=$NARRATOR_TEST_KEY tests/wordpress/run.sh) || wp_ok=$?
kill "$wp_narrator"; wait "$wp_narrator" || true
[[ $wp_ok -eq 0 ]] || exit "$wp_ok"

stage "go test (race detector on the concurrent packages)"
race=(./internal/jobs/... ./internal/pipeline/... ./internal/sqlite/... ./internal/postgres/... ./internal/storetest/... ./internal/s3/... ./internal/web/... ./internal/localfs/... ./internal/festival/... ./internal/flite/... ./internal/espeak/... ./internal/proc/... ./internal/mp3/... ./internal/pcm/... ./internal/onnx/... ./internal/neural/... ./internal/phonemize/... ./internal/listens/... ./internal/sqlstore/...)
# SQLite's C code, machine-translated to Go (modernc.org/sqlite/lib), is left
# uninstrumented (and without -race's checkptr), as cgo's C code always is:
# instrumented, it was most of internal/sqlite's time (docs/figures.md). Our
# code, the driver's Go side and modernc's libc, whose locks SQLite uses, are
# still checked.
go test -race -gcflags=modernc.org/sqlite/lib=-race=false -count=1 -timeout 15m "${race[@]}"

stage "go test (every other package, and the end-to-end and browser tests)"
# A package the race stage ran is not run again without the detector, unless it has
# e2e-tagged tests (internal/pipeline).
raced=$(go list "${race[@]}" | grep -v '/internal/pipeline$')
mapfile -t rest < <(go list -tags e2e ./... | grep -vxF "$raced")
go test -count=1 -timeout 20m -tags e2e "${rest[@]}"
stage "done"
echo "Dashboard screenshots from the browser tests: $(pwd)/artifacts/screenshots/"
