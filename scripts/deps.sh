#!/usr/bin/env bash
# Installs the Debian packages Narrator needs that are missing.
#   scripts/deps.sh runtime   speech engines and the MP3 encoder
#   scripts/deps.sh test      the above, plus what the test suite uses
#   scripts/deps.sh cluster   runtime, plus PostgreSQL and haproxy
#   scripts/deps.sh onnxruntime [quick]   only the onnxruntime library; prints its path on stdout.
#       quick: fail at once, saying nothing, if the npm registry does not answer within seconds
#       (scripts/serve.sh then goes on without neural voices)
# test also fetches the onnxruntime library (neural voices).
set -euo pipefail

# onnxruntime, the library neural voices (Piper, Kokoro) run on: Microsoft's CPU build for Linux
# x64, MIT-licensed, as the npm package onnxruntime-node ships it ("license": "MIT" in its
# package.json). No Debian package has it. `npm pack` downloads the tarball without running its
# install scripts; its SHA-256 is pinned here, and only the library is kept, in a cache shared by
# every checkout. narrator loads it only in its onnx-worker processes (--onnxruntime PATH).
ort_version=1.30.0
ort_package=onnxruntime-node@$ort_version
ort_sha256=6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75
ort_member=package/bin/napi-v6/linux/x64/libonnxruntime.so.1
ort_dir=${XDG_CACHE_HOME:-$HOME/.cache}/narrator/onnxruntime/$ort_version
ort_lib=$ort_dir/libonnxruntime.so.1

# fetch_onnxruntime puts the library at $ort_lib unless it is there already. With "quick", it
# gives up silently unless npm is there and the registry tells the package's version within
# seconds.
fetch_onnxruntime() {
  [[ -f $ort_lib ]] && return 0
  if [[ ${1:-} == quick ]]; then
    command -v npm >/dev/null || return 1
    timeout 15 npm view --fetch-retries=0 --fetch-timeout=8000 "$ort_package" version >/dev/null 2>&1 || return 1
  fi
  command -v npm >/dev/null || { echo "onnxruntime: npm is needed to fetch $ort_package (apt-get install npm)" >&2; return 1; }
  local tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064 # expand $tmp now
  trap "rm -rf '$tmp'" RETURN
  echo "Fetching $ort_package (113 MB, once) for neural voices" >&2
  (cd "$tmp" && npm pack --ignore-scripts --silent "$ort_package" >/dev/null) || return 1
  local tgz=$tmp/onnxruntime-node-$ort_version.tgz
  if ! echo "$ort_sha256  $tgz" | sha256sum -c --status; then
    echo "onnxruntime: $ort_package does not match its pinned SHA-256 $ort_sha256" >&2
    return 1
  fi
  tar -xzf "$tgz" -C "$tmp" "$ort_member" || return 1
  mkdir -p "$ort_dir"
  mv "$tmp/$ort_member" "$ort_lib.part" && mv "$ort_lib.part" "$ort_lib"
}

if [[ ${1:-runtime} == onnxruntime ]]; then
  fetch_onnxruntime "${2:-}"
  echo "$ort_lib"
  exit 0
fi

# bubblewrap: the sandbox the engines run in (narrator serve --sandbox).
# gcc and libespeak-ng-dev build bin/narrator-espeak (below).
runtime=(espeak-ng lame festival festvox-us-slt-hts flite bubblewrap ca-certificates gcc libespeak-ng-dev)
# For the tests: python3, ffmpeg, pocketsphinx (its pocketsphinx_continuous) and pocketsphinx-en-us
# run scripts/intelligibility.py; sox: reference resampling and WAV reading; chromium: the dashboard
# browser tests; postgresql, haproxy and curl: the PostgreSQL store, the cluster test and the S3
# server's set-up (scripts/services.sh); systemd: systemd-analyze verify of deploy/narrator.service.
testing=(ffmpeg sox pocketsphinx pocketsphinx-en-us python3 chromium postgresql haproxy curl systemd)
# The WordPress plugin (integrations/wordpress): php -l, phpcs and phpunit, and its tests against
# Debian's WordPress on a throwaway MariaDB (integrations/wordpress/tests/wordpress/run.sh).
testing+=(php-cli php-mysql php-mbstring php-xml phpunit php-codesniffer wordpress mariadb-server)
# npm: installs Spectral, the OpenAPI linter (scripts/test.sh), and fetches onnxruntime. Any npm will do: NodeSource's nodejs
# carries its own, and Debian's npm package would conflict with it.
command -v npm >/dev/null || testing+=(npm)

want=("${runtime[@]}")
case "${1:-runtime}" in
  test) want+=("${testing[@]}") ;;
  cluster) want+=(postgresql haproxy curl) ;; # scripts/cluster.sh
esac

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "Installing Debian packages: ${missing[*]}" >&2
  sudo=()
  [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q >&2
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

# bin/narrator-espeak runs the eSpeak NG library for the phonemes of neural voices
# (internal/phonemize). eSpeak NG is GPL-3.0, so it is a program of its own, never linked into
# narrator, which looks for it beside its own binary, then in PATH.
root=$(cd "$(dirname "$0")/.." && pwd)
helper_src="$root/internal/phonemize/helper/narrator-espeak.c"
helper_bin="$root/bin/narrator-espeak"
if [[ ! -x $helper_bin || $helper_src -nt $helper_bin ]]; then
  mkdir -p "$root/bin"
  cc -O2 -Wall -o "$helper_bin" "$helper_src" -lespeak-ng
fi

# The tests need onnxruntime: a failure stops them. scripts/serve.sh fetches it for runtime.
if [[ ${1:-runtime} == test ]]; then
  fetch_onnxruntime
fi
