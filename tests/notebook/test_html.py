"""The notebook's HTML of a report (no kernel): what a learner's code can put in it is escaped, the graph break
is quoted on the cell's own lines, the cost section is a table where the report has one."""

from __future__ import annotations

from judge.reports.i18n import T
from judge.reports.report import (
    CheckResult,
    CompiledCost,
    CostFigures,
    CostSection,
    EagerCost,
    GraphBreakDiagnostic,
    Report,
    SourceLocation,
    Verdict,
)
from practice.html import report_html, report_text

CELL = "# %%practice x\nimport torch\n\ndef f(x):\n    if x.sum().item() > 0:  # <b>mine</b>\n        return x\n"


def graph_break_report(**extra) -> Report:
    where = SourceLocation(file="cell.py", line=5, text="if x.sum().item() > 0:  # <b>mine</b>")
    check = CheckResult(name="test_one_graph", title=T("one graph", zh="一张图"), passed=False,
                        verdict=Verdict.GRAPH_BREAK, message="graph break at line 5 (`<script>alert(1)</script>`)",
                        diagnostics=[GraphBreakDiagnostic(reason="data-dependent <img src=x onerror=alert(1)>",
                                                          location=where)])
    return Report(exercise_id="x", verdict=Verdict.GRAPH_BREAK, summary="graph break", checks=[
        check, CheckResult(name="test_same", passed=True)], stdout="<iframe>printed</iframe>", **extra)


def test_what_the_learner_wrote_is_escaped():
    html = report_html(graph_break_report(), CELL, "en")
    for planted in ("<script>", "<img src=x", "<b>mine</b>", "<iframe>"):
        assert planted not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;b&gt;mine&lt;/b&gt;" in html


def test_the_graph_break_is_quoted_on_the_cells_lines():
    html = report_html(graph_break_report(), CELL, "zh")
    assert 'data-cell-line="5"' in html and "单元格第 5 行" in html and "一张图" in html
    assert '<tr class="tp-hit"><td class="tp-ln">5</td>' in html
    assert [n for n in range(3, 8) if f'<td class="tp-ln">{n}</td>' in html] == [3, 4, 5, 6]  # two around, in the cell
    assert "❱ 5" in report_text(graph_break_report(), CELL, "en")


def test_the_cost_section_is_a_table_where_the_report_has_one():
    figures = [CostFigures(who=who, eager=EagerCost(ops=ops, bytes_read=4096, bytes_written=2048),
                           compiled=CompiledCost(kernels=["cpp_fused_0"] * kernels, bytes_estimate=1024))
               for who, ops, kernels in (("learner", 5, 1), ("reference", 5, 1), ("starter", 7, 3))]
    cost = CostSection(inputs="x: float32[8, 64]", torch_version="2.13.0", figures=figures)
    html = report_html(graph_break_report(cost=cost), CELL, "en")
    assert 'class="tp-cost"' in html and "What compiling bought" in html
    assert [w for w in ("learner", "reference", "starter") if f'data-who="{w}"' in html] == [
        "learner", "reference", "starter"]
    assert "eager ops" in html
    assert 'class="tp-cost"' not in report_html(graph_break_report(), CELL, "en")
