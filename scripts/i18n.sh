#!/usr/bin/env bash
# The gettext catalogs (Babel), extracted, merged and compiled; the compiled .mo files are committed (a fresh
# clone needs no build step). Translate new entries in the .po files, then run this again.
#   web UI:        web/locale/messages.pot -> web/locale/zh/LC_MESSAGES/messages.po   (keyword N_, templates)
#   grading core:  judge/locale/core.pot   -> judge/locale/zh/LC_MESSAGES/core.po      (T("..."), judge/ but judge/checks/)
#                  judge/locale/checks.pot -> judge/locale/zh/LC_MESSAGES/checks.po    (T("..."), judge/checks/)
#                  judge/locale/cli.pot    -> judge/locale/zh/LC_MESSAGES/cli.po       (T("..."), cli/)
# tests/web/test_i18n.py and tests/core/test_i18n.py fail when a message lacks a translation, a translation
# names other {fields} than its message, or a .mo does not match its .po.
#   scripts/i18n.sh            extract + update + compile
#   scripts/i18n.sh compile    compile only
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYBABEL="${PYTHON:-${PRACTICE_VENV:-.venv}/bin/python} -m babel.messages.frontend"
EXTRACT="extract --no-default-keywords --no-location --sort-output --project torch-practice --version 1"
UPDATE="--no-fuzzy-matching --ignore-obsolete"
if [ "${1:-}" != "compile" ]; then
  $PYBABEL extract -F web/babel.cfg -k N_ --no-location --sort-output \
    --project torch-practice --version 1 -o web/locale/messages.pot .
  $PYBABEL update -i web/locale/messages.pot -d web/locale -D messages $UPDATE
  $PYBABEL $EXTRACT -F judge/babel.cfg -k T:1 -o judge/locale/core.pot $(find judge -name "*.py" -not -path "judge/checks/*" | sort)
  $PYBABEL $EXTRACT -F judge/babel.cfg -k T:1 -o judge/locale/checks.pot judge/checks
  $PYBABEL $EXTRACT -F judge/babel.cfg -k T:1 -o judge/locale/cli.pot cli
  for domain in core checks cli; do
    if [ -f "judge/locale/zh/LC_MESSAGES/$domain.po" ]; then
      $PYBABEL update -i "judge/locale/$domain.pot" -d judge/locale -D "$domain" -l zh $UPDATE
    else
      $PYBABEL init -i "judge/locale/$domain.pot" -d judge/locale -D "$domain" -l zh
    fi
  done
fi
$PYBABEL compile -d web/locale -D messages --statistics
for domain in core checks cli; do
  $PYBABEL compile -d judge/locale -D "$domain" -l zh --statistics
done
