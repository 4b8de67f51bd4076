#!/usr/bin/env bash
# ruff (style, imports, likely bugs) on the packages, tests/, the exercises' hidden tests and benchmarks/, and
# mypy (names, attributes, calls) on judge/, sandbox/, cli/ and web/.
# Their settings are in pyproject.toml. Extra arguments go to ruff, e.g. scripts/lint.sh --fix.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
# On a fresh machine (CI runs this before the tests): the project's environment with its test tools first.
if ! "$PYTHON" -c 'import ruff, mypy' 2>/dev/null; then
  [ -n "${PRACTICE_LINT_NO_INSTALL:-}" ] && { echo "lint: $PYTHON lacks ruff or mypy (pip install -e '.[test]')" >&2; exit 2; }
  env -u PYTHON bash scripts/install.sh --test
fi
status=0
"$PYTHON" -m ruff check "$@" || status=1
# The cache keeps a re-run to a few seconds; a cold run takes about half a minute.
"$PYTHON" -m mypy --cache-dir "${MYPY_CACHE_DIR:-.mypy_cache}" || status=1
exit $status
