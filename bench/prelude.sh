# Sourced by the bench scripts from the repository root: Go on PATH, the
# service helpers of scripts/services.sh, and a scratch directory $dir,
# removed with the services on exit.
export PATH="$PATH:/usr/local/go/bin"
source scripts/services.sh
dir=$(mktemp -d)
trap 'stop_services; rm -rf "$dir"' EXIT
