#!/usr/bin/env bash
# Installs the Debian packages Narrator needs that are missing.
#   scripts/deps.sh runtime   speech engines and the MP3 encoder
#   scripts/deps.sh test      the above, plus what the test suite uses
#   scripts/deps.sh cluster   runtime, plus PostgreSQL and haproxy
set -euo pipefail

# bubblewrap: the sandbox the engines run in (narrator serve --sandbox).
# gcc and libespeak-ng-dev build bin/narrator-espeak (below).
runtime=(espeak-ng lame festival festvox-us-slt-hts flite bubblewrap ca-certificates gcc libespeak-ng-dev)
# For the tests: python3, ffmpeg, pocketsphinx (its pocketsphinx_continuous) and pocketsphinx-en-us
# run scripts/intelligibility.py; sox: reference resampling and WAV reading; chromium: the dashboard
# browser tests; postgresql, haproxy and curl: the PostgreSQL store, the cluster test and the S3
# server's set-up (scripts/services.sh); systemd: systemd-analyze verify of deploy/narrator.service.
testing=(ffmpeg sox pocketsphinx pocketsphinx-en-us python3 chromium postgresql haproxy curl systemd)
# npm: installs Spectral, the OpenAPI linter (scripts/test.sh). Any npm will do: NodeSource's nodejs
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
