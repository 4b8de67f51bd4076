#!/usr/bin/env bash
# Make both hardened sandboxes usable on a Debian machine (CI, a fresh server), as root:
#   1. install bubblewrap and docker.io (skipped when already there),
#   2. start dockerd without any network of its own (--bridge=none --iptables=false) unless one answers,
#   3. build the worker image without a registry (python -m sandbox.docker_image).
# Idempotent; fails fast with a message naming the step. Usage: bash sandbox/setup_ci.sh [python]
set -euo pipefail

PYTHON="${1:-${PYTHON:-python3}}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_DIR="${PRACTICE_SETUP_LOG_DIR:-/tmp}"
fail() { echo "setup_ci: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root (it installs packages and starts dockerd)"

if ! command -v bwrap >/dev/null || ! command -v dockerd >/dev/null; then
  echo "setup_ci: installing bubblewrap and docker.io"
  export DEBIAN_FRONTEND=noninteractive
  for attempt in 1 2 3 4 5 6; do
    if apt-get update -qq >"$LOG_DIR/practice-apt.log" 2>&1 &&
       apt-get install -y -qq --no-install-recommends bubblewrap docker.io >>"$LOG_DIR/practice-apt.log" 2>&1; then
      break
    fi
    [ "$attempt" = 6 ] && { tail -20 "$LOG_DIR/practice-apt.log" >&2; fail "apt-get install bubblewrap docker.io failed"; }
    sleep 10  # another apt-get may hold the lock
  done
fi
command -v bwrap >/dev/null || fail "bwrap missing after install"

docker_ok() { "$PYTHON" -c "import docker; docker.from_env(timeout=5).ping()" >/dev/null 2>&1; }
if ! docker_ok; then
  echo "setup_ci: starting dockerd --bridge=none --iptables=false"
  nohup dockerd --bridge=none --iptables=false >"$LOG_DIR/practice-dockerd.log" 2>&1 &
  for _ in $(seq 1 60); do
    docker_ok && break
    sleep 1
  done
  docker_ok || { tail -20 "$LOG_DIR/practice-dockerd.log" >&2; fail "dockerd did not answer within 60 s"; }
fi

cd "$HERE"
"$PYTHON" -m sandbox.docker_image || fail "building the worker image failed"
"$PYTHON" - <<'EOF' || fail "a sandbox backend is unavailable after setup"
from sandbox.bwrap_backend import available as bwrap_available
from sandbox.docker_backend import available as docker_available
for name, reason in (("bwrap", bwrap_available()), ("docker", docker_available())):
    if reason:
        raise SystemExit(f"{name}: {reason}")
    print(f"setup_ci: sandbox {name} ready")
EOF
