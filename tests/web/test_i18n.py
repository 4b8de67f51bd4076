"""The web UI's gettext catalogs: every message of the pages is translated, and the committed .mo is the .po's.

Messages are found the way scripts/i18n.sh finds them (Babel with web/babel.cfg), so a string added to a
template or to web/*.py without a Chinese translation fails here, not in front of a learner.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from judge.reports.report import Verdict
from tests.catalogs import assert_mo_is_po_compiled
from web.i18n import DOMAIN, LOCALE_DIR, SCRIPT_STRINGS, gettext_for, strings, verdict_name

ROOT = Path(__file__).resolve().parents[2]
TRANSLATED = ["zh"]


def catalog(lang: str):
    with open(LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po", "rb") as f:
        return read_po(f, locale=lang)


def extracted() -> set[str]:
    with open(ROOT / "web" / "babel.cfg", encoding="utf-8") as f:
        method_map, options_map = parse_mapping_cfg(f)
    keywords = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None}
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
            str(ROOT), method_map, options_map, keywords=keywords):
        found.add(message[0] if isinstance(message, tuple) else message)
    return found


def placeholders(text: str) -> list[str]:
    return sorted(re.findall(r"\{\w+\}|%\(\w+\)[sd]", text))


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_page_message_is_translated(lang):
    messages = extracted()
    assert len(messages) > 100 and "Submit" in messages and "Download CSV" in messages
    translated = {m.id if isinstance(m.id, str) else m.id[0]: m for m in catalog(lang) if m.id}
    missing = sorted(messages - set(translated))
    assert missing == [], f"run scripts/i18n.sh and translate in web/locale/{lang}/LC_MESSAGES/messages.po"
    for msgid, message in translated.items():
        strings_ = [message.string] if isinstance(message.string, str) else list(message.string)
        assert all(strings_) and "fuzzy" not in message.flags, f"{msgid!r} is not translated"
        for s in strings_:
            assert placeholders(s) == placeholders(msgid if isinstance(message.id, str) else message.id[1]), msgid


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_committed_mo_is_the_po_compiled(lang):
    folder = LOCALE_DIR / lang / "LC_MESSAGES"
    assert_mo_is_po_compiled(folder / f"{DOMAIN}.po", folder / f"{DOMAIN}.mo", lang)


def test_the_page_scripts_get_every_key_in_both_languages():
    zh, en = strings("zh"), strings("en")
    assert set(zh) == set(en) == set(SCRIPT_STRINGS) | {f"verdict_{v.value}" for v in Verdict} | {"byte_units"}
    assert en["verdict_GRAPH_BREAK"] == "Graph break" and zh["verdict_GRAPH_BREAK"] == "图中断"
    # the grading core names the verdicts once, for the CLI and the pages alike
    assert verdict_name("zh", "TIME_LIMIT") == "超时" and verdict_name("en", "queued") == "Queued…"
    assert zh["line"] == "第 {n} 行" and en["too_many"] == "Too many submissions; try again in {s} s."
    assert gettext_for("zh")("Sign in") == "登录" and gettext_for("en")("Sign in") == "Sign in"
