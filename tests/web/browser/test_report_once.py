"""The exercise page's report (static/report.js) shows one finding once: checks that fail for the same reason
(judge.reports.report.mark_repeats) name the first instead of repeating its explanation, and a guard that failed
several times is one recompile with its count. Drawn in a real browser from report data, nothing graded.

Screenshot: report-once-en.png and report-once-zh.png in the screenshots folder.
"""

from __future__ import annotations

import json

import pytest

from judge.reports.report import (
    CheckResult,
    GuardOrigin,
    RecompileDiagnostic,
    Report,
    SourceLocation,
    Verdict,
    localized,
    mark_repeats,
)
from tests.core.test_findings_once import four_checks_one_break
from tests.web.browser.conftest import SCREENSHOTS, open_page

pytestmark = [pytest.mark.browser]
DRAW = """(report) => {
  const T = JSON.parse(document.getElementById("strings").textContent);
  const R = window.PracticeReport.make(T, 2000, "solution.py");
  const box = document.getElementById("report");
  box.replaceChildren(...R.render(report).parts);
  box.querySelectorAll("details").forEach((d) => { d.open = true; });
}"""


@pytest.mark.parametrize("lang, same, times", [("en", "(the same failure as test_one_graph)", "×3"),
                                               ("zh", "（与 test_one_graph 的失败相同）", "×3")])
def test_one_break_is_explained_once_and_a_repeated_guard_counted(browser, book_live, page_errors, lang, same, times):
    checks = four_checks_one_break()
    guard = GuardOrigin(guard="n == 2", kind="value", count=3, explanation="a constant",
                        location=SourceLocation(file="solution.py", line=5, text="h = x * n"))
    checks.append(CheckResult(name="test_recompiles", passed=False, verdict=Verdict.RECOMPILE, message="twice",
                              diagnostics=[RecompileDiagnostic(compiles=2, limit=1, origin=guard)]))
    mark_repeats(checks)
    report = Report(exercise_id="graph-break-step", verdict=Verdict.GRAPH_BREAK, checks=checks,
                    summary=f"test_one_graph: {checks[0].message}")
    context, page = open_page(browser, page_errors, width=1100, height=800)
    page.goto(f"{book_live.url}/playground?lang={lang}")  # a page that loads report.js and the UI strings
    page.evaluate(DRAW, json.loads(localized(report, lang).model_dump_json()))
    shown = page.locator("#report").inner_text()
    assert shown.count("unknown while compiling") == 1, shown
    assert shown.count(same) == 3 and times in shown and shown.count("n == 2") == 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#report").screenshot(path=str(SCREENSHOTS / f"report-once-{lang}.png"))
    assert not page_errors, page_errors
    context.close()
