#!/usr/bin/env bash
# Set up (first run) and run the test suite in parallel, lane by lane (tests/lanes.py says which test runs in which
# lane and what each lane needs; tests/lane_budgets.toml holds each lane's CPU-seconds budget).
#   scripts/test.sh                       every lane
#   scripts/test.sh --lane quick          the inner loop: the inprocess and warm lanes (under two minutes on 2 cores)
#   scripts/test.sh --lane proofs,cold    any lanes (--lane is repeatable); the lanes: inprocess, warm, proofs,
#                                         sandbox, cold, browser, deploy
# Other arguments go to pytest, e.g. scripts/test.sh --lane quick -k verdict. A lane over its budget fails the run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
lanes=() pytest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --lane) [ $# -ge 2 ] || { echo "test.sh: --lane needs a lane (quick, all, or one of tests/lanes.py's)" >&2; exit 2; }
            lanes+=("$2"); shift 2 ;;
    --lane=*) lanes+=("${1#--lane=}"); shift ;;
    *) pytest_args+=("$1"); shift ;;
  esac
done
# What the chosen lanes need (postgres, sandboxes, chromium): tests/lanes.py runs on the system's python3.
needs="$(python3 tests/lanes.py needs ${lanes[@]+"${lanes[@]}"})"
if [ -z "$needs" ]; then
  bash scripts/install.sh --test --no-services  # no browser, database or sandbox: the test extra is enough
else
  bash scripts/install.sh --test
fi
# The project's virtualenv first on PATH, as `source .venv/bin/activate` does: `practice` is its command.
export VIRTUAL_ENV="$(cd "${PRACTICE_VENV:-.venv}" && pwd)"
export PATH="$VIRTUAL_ENV/bin:$PATH"
# install.sh --test set up bubblewrap and Docker: a sandbox test may not skip for want of them.
export PRACTICE_REQUIRE_SANDBOXES="${PRACTICE_REQUIRE_SANDBOXES:-1}"
# A PostgreSQL server of this run's own (Debian's package, from install.sh --test) for the lanes that need one: the
# web and store tests run on it as well as on SQLite (their PostgreSQL half is in the deploy lane), and the
# multi-process tests need it. A test that wants it in a lane that does not start it fails (PRACTICE_REQUIRE_POSTGRES).
cleanup=()
trap 'for step in "${cleanup[@]}"; do eval "$step"; done' EXIT
if [ -z "${PRACTICE_TEST_DATABASE_URL:-}" ] && grep -qx postgres <<<"$needs"; then
  PG_DIR="$(mktemp -d /tmp/practice-pg.XXXXXX)"
  chmod 755 "$PG_DIR"  # the server runs as the postgres user
  cleanup+=('bash scripts/postgres.sh stop "$PG_DIR/cluster"; rm -rf "$PG_DIR"')
  PRACTICE_TEST_DATABASE_URL="$(bash scripts/postgres.sh start "$PG_DIR/cluster")"
fi
# One folder of compile cache layers for the whole run (tests/conftest.py `layers_root`): each layer built once.
if [ -z "${PRACTICE_TEST_LAYERS_DIR:-}" ]; then
  PRACTICE_TEST_LAYERS_DIR="$(mktemp -d /tmp/practice-layers.XXXXXX)"  # mode 0700: only this user enters
  cleanup+=('rm -rf "$PRACTICE_TEST_LAYERS_DIR"')
  export PRACTICE_TEST_LAYERS_DIR
fi
[ -z "${PRACTICE_TEST_DATABASE_URL:-}" ] || export PRACTICE_TEST_DATABASE_URL
export PRACTICE_REQUIRE_POSTGRES="${PRACTICE_REQUIRE_POSTGRES:-1}"
# One warm C++ build cache shared by every grading in this run (FX-graph/AOT caches stay off per submission).
export PRACTICE_INDUCTOR_CACHE="${PRACTICE_INDUCTOR_CACHE:-/tmp/torch-practice-inductor-test}"
# The servers the tests start build no trusted compile cache layers; tests/sandbox/test_cache_layers.py does.
export PRACTICE_COMPILE_CACHE="${PRACTICE_COMPILE_CACHE:-0}"
lane_args=()
for lane in ${lanes[@]+"${lanes[@]}"}; do lane_args+=(--lane "$lane"); done
# Every test's lane and CPU-s, kept for the next look at where the suite's time goes (unless asked elsewhere).
[[ " ${pytest_args[*]-} " == *" --lane-report"* ]] || { mkdir -p test-artifacts; lane_args+=(--lane-report test-artifacts/lanes.json); }
started=$(date +%s)
# not exec: the EXIT trap stops the PostgreSQL server and removes the layers
status=0
"$VIRTUAL_ENV/bin/python" -m pytest -n "${PRACTICE_TEST_WORKERS:-2}" --dist loadgroup --durations=25 \
  ${lane_args[@]+"${lane_args[@]}"} ${pytest_args[@]+"${pytest_args[@]}"} || status=$?
echo "test.sh: ${lanes[*]:-all lanes} took $(( $(date +%s) - started )) s"
exit $status
