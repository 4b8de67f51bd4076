"""One finding is shown once: checks that fail for the same reason point to the first (`same_as`), the same failing
guard is one recompile with a count, and a graph that computes nothing is not a graph of the compiler's view. The
report data says it once (judge.reports.report.mark_repeats, judge.parent.playground.once), and every front-end shows
it so."""

from __future__ import annotations

import pytest
import torch
from rich.console import Console

from cli.render import print_report
from judge.reports.report import (
    CheckResult,
    ErrorDiagnostic,
    GraphBreakDiagnostic,
    GuardOrigin,
    Report,
    SourceLocation,
    Verdict,
    mark_repeats,
)

LINE6 = SourceLocation(file="solution.py", line=6, text="if h.sum().item() > 0:")
EXPLAIN = "a Python `if` depends on a tensor's value, which is unknown while compiling. Use `torch.where`."


def broken(name: str, prefix: str, line: SourceLocation = LINE6) -> CheckResult:
    """A check failed by the break at `line`, in its own words (`prefix`), as the hidden tests word it."""
    diag = GraphBreakDiagnostic(reason="Data-dependent branching\nExplanation: ...", explanation=EXPLAIN,
                                location=line, gb_id="GB0170")
    return CheckResult(name=name, title=name, passed=False, verdict=Verdict.GRAPH_BREAK,
                       message=f"{prefix}: graph break at line {line.line}: {EXPLAIN}", diagnostics=[diag])


def four_checks_one_break() -> list[CheckResult]:
    return [broken("test_one_graph", "`torch.compile(fullgraph=True)`"), broken("test_same[pos]", "your function"),
            broken("test_dtypes", "your compiled function"), broken("test_search", "your compiled function")]


def test_checks_failed_by_the_same_break_point_to_the_first():
    checks = four_checks_one_break() + [broken("test_other_line", "your function", LINE6.model_copy(update={
        "line": 9})), CheckResult(name="test_error", passed=False, message="boom", diagnostics=[
            ErrorDiagnostic(exc_type="RuntimeError", message="boom")])]
    mark_repeats(checks)
    assert [c.same_as for c in checks] == ["", "test_one_graph", "test_one_graph", "test_one_graph", "", ""]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_terminal_explains_one_break_once(lang):
    checks = four_checks_one_break()
    mark_repeats(checks)
    report = Report(exercise_id="graph-break-step", verdict=Verdict.GRAPH_BREAK, checks=checks,
                    summary=f"test_one_graph: {checks[0].message}")
    console = Console(record=True, width=200, force_terminal=False)
    print_report(console, report, lang=lang)
    shown = console.export_text()
    assert shown.count("which is unknown while compiling") == 1, shown  # the panel, not again under each check
    assert shown.count("test_one_graph") >= 4  # each later check names the one that shows it
    assert "`" not in shown  # code spans shown as code


def test_the_notebook_explains_one_break_once():
    from practice.html import report_html

    checks = four_checks_one_break()
    mark_repeats(checks)
    report = Report(exercise_id="graph-break-step", verdict=Verdict.GRAPH_BREAK, checks=checks,
                    summary=f"test_one_graph: {checks[0].message}")
    html = report_html(report, "x = 1\n", "en")
    assert html.count("which is unknown while compiling") == 1
    assert html.count("(the same failure as test_one_graph)") == 3


def test_one_failing_guard_is_one_recompile_with_a_count():
    from judge.parent.playground import once

    line5 = SourceLocation(file="mine.py", line=5, text="h = x * n")
    seen = [GuardOrigin(guard="n == 2", compile_id=cid, kind="value", location=line5) for cid in ("0/0", "0/1", "0/2")]
    other = GuardOrigin(guard="n == 3", compile_id="0/1", kind="value", location=line5)
    merged = once(seen + [other])
    assert [(o.guard, o.count) for o in merged] == [("n == 2", 3), ("n == 3", 1)]


def test_one_call_that_recompiles_every_piece_after_its_breaks_is_one_recompile():
    """A value change recompiles the function and each piece after a graph break (a frame each, each failing the
    same guard at its own line): one finding with its other lines, and the summary counts one recompile, as the
    compiler view's heading does (its reasons are the same text)."""
    from cli.playground import print_playground
    from judge.parent.playground import PlaygroundReport, once, recompiled_calls
    from judge.reports.report import CompileEvent, CompilerView

    lines = [SourceLocation(file="mine.py", line=n, text=f"line {n}") for n in (4, 6, 8)]
    merged = once([GuardOrigin(guard="n == 2", compile_id=f"{frame}/1", kind="value", location=line)
                   for frame, line in enumerate(lines)])
    assert [(o.guard, o.count, [a.line for a in o.also]) for o in merged] == [("n == 2", 1, [6, 8])]
    timeline = [CompileEvent(call=1, inputs="float32[4], int 2", compiled=3),
                CompileEvent(call=2, inputs="float32[4], int 3", compiled=3, guard="n == 2", line=4)]
    report = PlaygroundReport(summary="", complete=True, recompiles=merged,
                          compiler=CompilerView(recompiles=["n == 2"], timeline=timeline))
    assert recompiled_calls(report) == 1
    assert recompiled_calls(PlaygroundReport(summary="", recompiles=merged)) == 1  # no call record: distinct guards
    console = Console(record=True, width=200, force_terminal=False)
    print_playground(console, report, "zh")
    shown = console.export_text()
    assert "1. n == 2" in shown and "2. n == 2" not in shown  # one numbered finding (then the timeline's row)
    assert "第 6, 8 行" in shown


def test_the_terminal_shows_a_repeated_guard_once_with_its_count():
    from cli.playground import print_playground
    from judge.parent.playground import PlaygroundReport, once

    line5 = SourceLocation(file="mine.py", line=5, text="h = x * n")
    report = PlaygroundReport(summary="3 call(s) compiled", complete=True, recompiles=once(
        [GuardOrigin(guard="n == 2", kind="value", location=line5, explanation="a constant")] * 3))
    console = Console(record=True, width=200, force_terminal=False)
    print_playground(console, report, "en")
    shown = console.export_text()
    assert shown.count("n == 2") == 1 and "×3" in shown


def test_a_graph_that_computes_nothing_is_not_shown():
    from judge.verifier_side.compiler_view import ViewBuilder

    def nothing(x):
        return (x,)

    def something(x):
        return (x + 1,)

    builder = ViewBuilder()
    builder.add_graph({"g": 1}, torch.fx.symbolic_trace(nothing))
    builder.add_graph({"g": 2}, torch.fx.symbolic_trace(something))
    assert len(builder.view().graphs) == 1


def test_a_title_wrapped_over_two_lines_is_one_title():
    from judge.verifier_side.plugin import title_of

    def test_boundaries():
        """Boundary values: zeros of both signs, huge
        magnitudes and the thresholds
        zh: 边界值：正负零、极大的数值
        以及阈值
        """

    title = title_of(test_boundaries)
    assert str(title) == "Boundary values: zeros of both signs, huge magnitudes and the thresholds"
    assert title.render("zh") == "边界值：正负零、极大的数值 以及阈值"


def test_pytorchs_placeholders_are_filled_from_the_break_itself():
    from judge.compiler.break_registry import words

    said = ("Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin operator "
            "`print` with argument types ['str', 'int'] (has_kwargs False)\n")
    filled = words("GB0059", said)
    assert "`print` with argument types ['str', 'int'] (has_kwargs False)" in filled.explanation
    assert "Avoid calling builtin `print` with argument types ['str', 'int']." in filled.hints
    for text in (filled.explanation, filled.hints, words("GB0059").explanation, words("GB0059").hints):
        assert "{" not in text and "}" not in text
