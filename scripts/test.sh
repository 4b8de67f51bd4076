#!/usr/bin/env bash
# Set up (first run) and run the whole test suite in parallel. Extra arguments go to pytest,
# e.g. scripts/test.sh -m "not slow" for the quick subset.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install.sh --test
# The project's virtualenv first on PATH, as `source .venv/bin/activate` does: `practice` is its command.
export VIRTUAL_ENV="$(cd "${PRACTICE_VENV:-.venv}" && pwd)"
export PATH="$VIRTUAL_ENV/bin:$PATH"
# install.sh --test set up bubblewrap and Docker: a sandbox test may not skip for want of them.
export PRACTICE_REQUIRE_SANDBOXES="${PRACTICE_REQUIRE_SANDBOXES:-1}"
# A PostgreSQL server of this run's own (Debian's package, from install.sh --test): the web and store tests
# run on it as well as on SQLite, and the multi-process tests need it.
if [ -z "${PRACTICE_TEST_DATABASE_URL:-}" ]; then
  PG_DIR="$(mktemp -d /tmp/practice-pg.XXXXXX)"
  chmod 755 "$PG_DIR"  # the server runs as the postgres user
  trap 'bash scripts/postgres.sh stop "$PG_DIR/cluster"; rm -rf "$PG_DIR"' EXIT
  PRACTICE_TEST_DATABASE_URL="$(bash scripts/postgres.sh start "$PG_DIR/cluster")"
fi
export PRACTICE_TEST_DATABASE_URL PRACTICE_REQUIRE_POSTGRES="${PRACTICE_REQUIRE_POSTGRES:-1}"
# One warm C++ build cache shared by every grading in this run (FX-graph/AOT caches stay off per submission).
export PRACTICE_INDUCTOR_CACHE="${PRACTICE_INDUCTOR_CACHE:-/tmp/torch-practice-inductor-test}"
# The servers the tests start build no trusted compile cache layers; tests/sandbox/test_cache_layers.py does.
export PRACTICE_COMPILE_CACHE="${PRACTICE_COMPILE_CACHE:-0}"
started=$(date +%s)
# not exec: the EXIT trap stops the PostgreSQL server
status=0
"$VIRTUAL_ENV/bin/python" -m pytest -n "${PRACTICE_TEST_WORKERS:-2}" --dist loadgroup --durations=25 "$@" || status=$?
echo "test.sh: the suite took $(( $(date +%s) - started )) s"
exit $status
