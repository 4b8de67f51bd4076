#!/usr/bin/env bash
# ruff (style, imports, likely bugs) and mypy (names, attributes, calls) on judge/, sandbox/, cli/ and web/.
# Their settings are in pyproject.toml. Extra arguments go to ruff, e.g. scripts/lint.sh --fix.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
status=0
"$PYTHON" -m ruff check "$@" || status=1
# The cache keeps a re-run to a few seconds; a cold run takes about half a minute.
"$PYTHON" -m mypy --cache-dir "${MYPY_CACHE_DIR:-.mypy_cache}" || status=1
exit $status
