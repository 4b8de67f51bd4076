#!/usr/bin/env bash
# Install everything torch-practice needs on a fresh Debian machine. Idempotent.
#   scripts/install.sh          Python packages + bubblewrap (enough to serve with the bwrap sandbox)
#   scripts/install.sh --test   also chromium and a Chinese font (browser tests and their screenshots of the Chinese
#                               pages), postgresql (database tests), docker.io + a running
#                               dockerd + the worker image
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
say() { echo "install: $*"; }

# torch first, pinned: an open range before torch is installed would pull a multi-GB CUDA build.
if ! "$PYTHON" -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' 2>/dev/null; then
  say "torch==2.13.0"
  "$PYTHON" -m pip install -q torch==2.13.0
fi
if ! "$PYTHON" -c 'import judge, fastapi, xdist, playwright, argon2, babel' 2>/dev/null || [ pyproject.toml -nt .install-stamp ]; then
  say "the project and its Python dependencies"
  "$PYTHON" -m pip install -q -e '.[test]'
  touch .install-stamp
fi

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || { say "need root to apt-get install ${missing[*]}"; return 1; }
  say "apt: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  for attempt in 1 2 3 4 5; do
    apt-get update -qq >/tmp/practice-apt.log 2>&1 &&
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/practice-apt.log 2>&1 && return 0
    sleep 10
  done
  tail -20 /tmp/practice-apt.log >&2
  return 1
}

apt_install bubblewrap || say "bubblewrap unavailable: serve with --sandbox docker, or none for local use"
if [ "${1:-}" = "--test" ]; then
  apt_install chromium fonts-wqy-microhei  # without a CJK font the Chinese pages' screenshots show boxes
  apt_install postgresql  # the tests start a server of their own (scripts/postgres.sh); no service is used
  bash sandbox/setup_ci.sh "$PYTHON"
fi
