#!/usr/bin/env bash
# Set up (first run: the project's .venv, see install.sh) and serve the web UI with embedded defaults: SQLite in
# ./data, the bwrap sandbox.
# Extra arguments go to `practice serve` (e.g. --port 8080, --sandbox docker).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install.sh
exec "${PRACTICE_VENV:-.venv}/bin/python" -m cli.main serve "$@"
