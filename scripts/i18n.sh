#!/usr/bin/env bash
# The web UI's catalogs (Babel): extract every message of web/ into web/locale/messages.pot, merge it into
# web/locale/zh/LC_MESSAGES/messages.po (translate the new entries there), and compile the .mo files that are
# committed (a fresh clone needs no build step). tests/web/test_i18n.py fails when a message lacks a
# translation or a .mo does not match its .po.
#   scripts/i18n.sh            extract + update + compile
#   scripts/i18n.sh compile    compile only
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYBABEL="${PYTHON:-python3} -m babel.messages.frontend"
if [ "${1:-}" != "compile" ]; then
  $PYBABEL extract -F web/babel.cfg -k N_ --no-location --sort-output \
    --project torch-practice --version 1 -o web/locale/messages.pot .
  $PYBABEL update -i web/locale/messages.pot -d web/locale -D messages --no-fuzzy-matching --ignore-obsolete
fi
$PYBABEL compile -d web/locale -D messages --statistics
