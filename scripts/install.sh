#!/usr/bin/env bash
# Install everything torch-practice needs on a fresh Debian machine, into the project's own virtualenv. Idempotent.
#   scripts/install.sh          .venv (torch==2.13.0 first, then the project and its declared dependencies)
#                               + bubblewrap: enough to serve with the bwrap sandbox
#   scripts/install.sh --test   also the test extra, chromium and a Chinese font (browser tests and their
#                               screenshots of the Chinese pages), postgresql (database tests), docker.io + a running
#                               dockerd + the worker image
#   scripts/install.sh --test --no-services
#                               the test extra only: enough for lanes that need no browser, database or sandbox
#                               (scripts/test.sh --lane quick)
# The virtualenv is PRACTICE_VENV (default: .venv in this checkout); it is made with PYTHON (default: python3) and
# holds only what pyproject.toml declares, so a missing declaration fails here and in CI, not on a user's machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BASE_PYTHON="${PYTHON:-python3}"
VENV="${PRACTICE_VENV:-.venv}"
PY="$VENV/bin/python"
TEST=0; SERVICES=1
for arg in "$@"; do
  case "$arg" in
    --test) TEST=1 ;;
    --no-services) SERVICES=0 ;;
    *) echo "install: unknown option $arg (--test, --no-services)" >&2; exit 2 ;;
  esac
done
say() { echo "install: $*"; }

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
    sleep 10  # another apt-get may hold the lock
  done
  tail -20 /tmp/practice-apt.log >&2
  return 1
}

# Every sandboxed run gets a fresh /tmp (bwrap and docker), which would hide a virtualenv kept under it: a checkout
# under /tmp keeps its .venv as a link to a folder of the user's cache instead.
made="$VENV"
if [ -z "${PRACTICE_VENV:-}" ] && [ ! -e "$VENV" ]; then
  case "$(pwd -P)/" in
    /tmp/*|/dev/shm/*) made="${XDG_CACHE_HOME:-$HOME/.cache}/torch-practice/venv-$(pwd -P | sha256sum | cut -c1-16)" ;;
  esac
fi
if [ ! -x "$made/bin/python" ]; then
  say "virtualenv $made (from $("$BASE_PYTHON" -c 'import sys; print(sys.executable)'))"
  mkdir -p "$(dirname "$made")"
  if ! "$BASE_PYTHON" -m venv "$made" >/tmp/practice-venv.log 2>&1; then
    # Debian's own Python makes virtualenvs only with python3-venv (its ensurepip) installed.
    rm -rf "$made"
    apt_install python3-venv || { cat /tmp/practice-venv.log >&2; say "cannot make a virtualenv: install python3-venv"; exit 1; }
    "$BASE_PYTHON" -m venv "$made"
  fi
fi
[ "$made" = "$VENV" ] || ln -sfn "$made" "$VENV"

# torch first, pinned: an open range before torch is installed would pull a multi-GB CUDA build.
if ! "$PY" -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' 2>/dev/null; then
  say "torch==2.13.0 into $VENV"
  "$PY" -m pip install -q torch==2.13.0
fi
extra=""; [ "$TEST" = 1 ] && extra="[test]"
stamp="$VENV/.install-stamp$extra"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || ! "$PY" -c 'import judge' 2>/dev/null; then
  say "the project and its declared dependencies into $VENV (pip install -e '.$extra')"
  "$PY" -m pip install -q -e ".$extra"
  touch "$stamp" "$VENV/.install-stamp"  # the test extra's install is also the plain one
fi

apt_install bubblewrap || say "bubblewrap unavailable: serve with --sandbox docker, or none for local use"
if [ "$TEST" = 1 ] && [ "$SERVICES" = 1 ]; then
  apt_install chromium fonts-wqy-microhei  # without a CJK font the Chinese pages' screenshots show boxes
  apt_install postgresql  # the tests start a server of their own (scripts/postgres.sh); no service is used
  bash sandbox/setup_ci.sh "$PY"
fi
