"""The grading core's gettext catalogs and its two-language text (judge/reports/i18n.py, judge/reports/report.py:
Localized).

Messages are found the way scripts/i18n.sh finds them (Babel, keyword T), so a message added to judge/ or cli/
without a Chinese translation fails here, not in front of a learner.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from judge.parent.proving import language_problems, reads_as_english
from judge.reports.i18n import DOMAINS, LOCALE_DIR, T
from judge.reports.report import CheckResult, MismatchDiagnostic, Report, Verdict, localized
from judge.verifier_side.plugin import title_of
from tests.catalogs import assert_mo_is_po_compiled

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {"core": [ROOT / "judge"], "checks": [ROOT / "judge" / "checks"], "cli": [ROOT / "cli"]}


def extracted(domain: str) -> set[str]:
    found = set()
    for folder in SOURCES[domain]:
        for path, _line, message, _comments, _context in extract_from_dir(
                str(folder), keywords={"T": (1,)}, method_map=[("**.py", "python")]):
            in_checks = path.replace("\\", "/").startswith("checks/") or "/checks/" in path
            if domain == "core" and folder.name == "judge" and in_checks:
                continue  # judge/checks/ is a domain of its own
            found.add(message if isinstance(message, str) else message[0])
    return found


def po(domain: str):
    with open(LOCALE_DIR / "zh" / "LC_MESSAGES" / f"{domain}.po", "rb") as f:
        return read_po(f, locale="zh")


def fields(text: str) -> list[str]:
    return sorted(re.findall(r"\{(\w+)[^{}]*\}", text))


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_core_message_is_translated(domain):
    translated = {m.id: m for m in po(domain) if m.id}
    missing = sorted(extracted(domain) - set(translated))
    assert missing == [], f"run scripts/i18n.sh and translate in judge/locale/zh/LC_MESSAGES/{domain}.po: {missing[:5]}"
    for msgid, message in translated.items():
        assert message.string and "fuzzy" not in message.flags, f"{msgid!r} is not translated"
        assert fields(message.string) == fields(msgid), f"{msgid!r}: the translation names other fields"
        assert not reads_as_english(message.string), f"{msgid!r}: the translation reads as English"


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_committed_mo_is_the_po_compiled(domain):
    folder = LOCALE_DIR / "zh" / "LC_MESSAGES"
    assert_mo_is_po_compiled(folder / f"{domain}.po", folder / f"{domain}.mo")


def test_a_message_renders_in_each_language_with_its_fields_in_that_language():
    inner = T("the output", zh="输出")
    message = T("{what} differs at {count} elements", zh="{what}有 {count} 个元素不同", what=inner, count=3)
    assert message.render("en") == "the output differs at 3 elements"
    assert message.render("zh") == "输出有 3 个元素不同"
    assert T("a message no catalog has").render("zh") is None
    assert T("{x} wraps", zh="{x} 包着", x=T("a message no catalog has")).render("zh") is None


def test_a_report_keeps_english_in_its_fields_and_other_languages_beside_them():
    check = CheckResult(name="test_x", title=T("one graph", zh="一张图"), passed=False, verdict=Verdict.WRONG_ANSWER,
                        message=T("{n} graphs", zh="{n} 张图", n=2),
                        diagnostics=[MismatchDiagnostic(case=T.same("x [4] float32"), what=T("output", zh="输出"))])
    report = Report(exercise_id="e", verdict=Verdict.WRONG_ANSWER, summary=T("wrong", zh="错误"), checks=[check])
    again = Report.model_validate_json(report.model_dump_json())  # what the store keeps and the API sends
    assert again.checks[0].message == "2 graphs" and again.missing_texts("zh") == []
    zh = localized(again, "zh")
    assert (zh.summary, zh.checks[0].title, zh.checks[0].message) == ("错误", "一张图", "2 张图")
    assert zh.checks[0].diagnostics[0].what == "输出" and localized(again, "en").checks[0].message == "2 graphs"
    assert language_problems(again) == []
    check.set_text("message", T.join([check.text("message"), T("and more", zh="还有更多")]))
    assert localized(check, "zh").message == "2 张图 还有更多" and check.message == "2 graphs and more"


def test_a_text_without_chinese_or_with_english_in_it_is_a_language_problem():
    untranslated = Report(exercise_id="e", verdict=Verdict.ACCEPTED, summary="every check passed",
                          checks=[CheckResult(name="t", title=T("a title", zh="标题"), passed=True)])
    assert language_problems(untranslated) == ["no zh text for summary"]
    mixed = Report(exercise_id="e", verdict=Verdict.ACCEPTED, summary=T("ok", zh="好"),
                   checks=[CheckResult(name="t", title=T("t", zh="the zh title left in English"), passed=True)])
    assert [p.split(":")[0] for p in language_problems(mixed)] == ["English in the Chinese report.t.title"]
    chinese_in_english = Report(exercise_id="e", verdict=Verdict.ACCEPTED, summary=T("好", zh="好"))
    assert language_problems(chinese_in_english) == ["Chinese in the English report.summary: '好'"]


def test_a_hidden_tests_title_gives_its_chinese_on_a_zh_line():
    def test_one_graph():
        """torch.compile(step, fullgraph=True) captures exactly one graph
        zh: torch.compile(step, fullgraph=True) 只捕获一张图
        """

    def test_english_only():
        """Only English here"""

    title = title_of(test_one_graph)
    assert str(title) == "torch.compile(step, fullgraph=True) captures exactly one graph"
    assert title.render("zh") == "torch.compile(step, fullgraph=True) 只捕获一张图"
    assert title_of(test_english_only) == "Only English here"
