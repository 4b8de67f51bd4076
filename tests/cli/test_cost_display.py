"""The cost section in the terminal: a line under the report, a table for `practice show ID --cost`, zh and en."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from rich.console import Console

from cli.cost_render import print_cost_line
from cli.main import cli
from cli.workspace import Workspace
from judge.costs import view as cost_view
from judge.reports.report import CompiledCost, CostFigures, CostSection, EagerCost, Report, Verdict


def section(learner_unavailable: str = "") -> CostSection:
    fused = CompiledCost(kernels=["cpp_fused_add_mean_mul_pow_rsqrt_silu_0"], bytes_estimate=4352)
    eager = EagerCost(ops=7, bytes_read=10592, bytes_written=8288)
    learner = (CostFigures(who="learner", unavailable=learner_unavailable) if learner_unavailable
               else CostFigures(who="learner", eager=eager, compiled=fused))
    return CostSection(inputs="x: float32[8, 64], w: float32[64]", torch_version="2.13.0+cpu", figures=[
        learner, CostFigures(who="reference", eager=eager, compiled=fused),
        CostFigures(who="starter", eager=eager, compiled=CompiledCost(
            kernels=["cpp_fused_silu_0"], bytes_estimate=4096, eager_ops_outside=6, eager_bytes_outside=14784))])


@pytest.mark.parametrize("lang, expected", [
    ("en", "Cost (Inductor's estimate): eager 7 ops, 18.4 KiB -> compiled 1 kernels, 4.3 KiB (4.3x less); "
           "reference 1 kernels, 4.3 KiB"),
    ("zh", "编译的收益（Inductor 的估计）：eager 7 个算子、18.4 KiB -> 编译后 1 个内核、4.3 KiB（少 4.3 倍）；"
           "参考答案 1 个内核、4.3 KiB"),
])
def test_the_summary_line(lang, expected):
    console = Console(width=400, record=True)
    print_cost_line(console, section(), lang)
    assert console.export_text().strip() == expected


def test_a_learner_without_figures_is_said_so():
    from judge.reports.i18n import text

    assert text(cost_view.summary(section("did not compile")), "en").startswith(
        "Cost (Inductor's estimate): yours has no figures; reference 1 kernels")


def test_rows_and_bars():
    rows = cost_view.rows(section())
    assert [r.who for r in rows] == ["learner", "reference", "starter"]
    assert (rows[2].kernels, rows[2].compiled_bytes, rows[2].saving) == ("1 + 0 + 6", "18.4 KiB", "1.0×")
    bars = cost_view.bars(section())
    assert [(b.kind, b.percent) for b in bars] == [("eager", 100.0), ("compiled", 23.1), ("compiled", 23.1),
                                                   ("compiled", 100.0)]
    assert cost_view.summary(None) is None


@pytest.mark.parametrize("lang, words", [
    ("en", ["compiling: frames · graphs · guards · s", "— · 1 · — · 1.5 s", "2 · 1 · 25 · 0.7 s",
            "its frames and guards are not counted here"]),
    ("zh", ["编译：帧 · 图 · guard · 秒", "— · 1 · — · 1.5 s", "2 · 1 · 25 · 0.7 s", "秒数只作展示，从不计分"])])
def test_the_table_says_what_compiling_cost_and_who_counted_it(lang, words):
    """Frames and guards counted by the verifier for the original; the learner's are not counted ("—"): Dynamo traced
    its function in its own process. Seconds are shown."""
    from cli.cost_render import print_cost
    from judge.reports.report import CompileCost

    cost = section()
    cost.figures[0].compiled = cost.figures[0].compiled.model_copy(update={"compile": CompileCost(inductor_s=1.46)})
    cost.figures[2].compiled = cost.figures[2].compiled.model_copy(
        update={"compile": CompileCost(frames=2, guards=25, dynamo_s=0.16, inductor_s=0.53)})
    console = Console(width=400, record=True)
    print_cost(console, cost, lang)
    shown = console.export_text()
    assert all(w in shown for w in words), shown


@pytest.mark.parametrize("lang, words", [("en", ["What compiling bought", "yours", "original", "1 + 0 + 6",
                                                 "cpp_fused_silu_0", "Inductor's estimate"]),
                                         ("zh", ["编译的收益", "你的", "原函数", "参考答案", "不是硬件计数"])])
def test_show_cost_prints_the_table_of_the_last_grading(lang, words, fake_course, tmp_path):
    ws = tmp_path / "ws"
    env = {"PRACTICE_EXERCISES_DIR": str(fake_course), "PRACTICE_WORKSPACE": str(ws), "COLUMNS": "200",
           "LC_ALL": None, "LANG": None, "PRACTICE_LANG": None}
    before = CliRunner().invoke(cli, ["show", "add-one", "--cost", "--lang", lang], env=env)
    assert before.exit_code == 1, before.output
    Workspace(ws).save_report("add-one", Report(exercise_id="add-one", verdict=Verdict.ACCEPTED, summary="ok",
                                                cost=section()))
    shown = CliRunner().invoke(cli, ["show", "add-one", "--cost", "--lang", lang], env=env)
    assert shown.exit_code == 0, shown.output
    for word in words:
        assert word in shown.output, (word, shown.output)
