"""Hidden tests for cond-skip-refine: one graph, the original's numbers, and refine costs nothing when not taken."""

import pytest
import torch

from judge.checks import WrongAnswer, assert_no_host_sync, assert_same_result, compile_one_graph, describe_tensor
from judge.checks.instrument import executed_ops
from judge.checks.sealed import run_sealed
from judge.i18n import T

HEAVY = ("aten.mm.default", "aten.addmm.default", "aten.bmm.default", "aten.tanh.default")


def inputs(largest: float, dtype=torch.float32, shape=(6, 16)):
    """x in [-1, 1] with one entry set to `largest` (h = 2x: refine runs when 2 * largest > 4), w small."""
    x = torch.rand(shape, dtype=dtype) * 2 - 1
    x[-1, 3] = largest
    return x, torch.randn(shape[1], shape[1], dtype=dtype) * 0.3


CASES = {
    "refined": (lambda: inputs(3.0), T("an outlier: refine runs", zh="有离群值：要执行 refine")),
    "plain": (lambda: inputs(0.9), T("no outlier: refine is skipped", zh="没有离群值：跳过 refine")),
    "boundary": (lambda: inputs(2.0), T("largest |h| exactly 4.0: not refined", zh="|h| 的最大值恰好是 4.0：不 refine")),
    "float64": (lambda: inputs(3.0, torch.float64), T("float64, an outlier", zh="float64，有离群值")),
    "one_row": (lambda: inputs(-3.0, shape=(1, 16)), T("one row, a negative outlier", zh="只有一行，负的离群值")),
}


def test_one_graph(entry):
    """torch.compile(step, fullgraph=True) captures exactly one graph
    zh: torch.compile(step, fullgraph=True) 只捕获一张图
    """
    captured = compile_one_graph(entry, *inputs(3.0))
    assert_no_host_sync(captured.graphs, what=T("your step's graph", zh="你的 step 的图"))


@pytest.mark.parametrize("case", list(CASES))
def test_same_as_original(entry, starter, case):
    """The compiled step equals the original, refined or not
    zh: 编译后的 step 与原函数一致，无论是否 refine
    """
    make, label = CASES[case]
    x, w = make()
    assert_same_result(entry.compile(fullgraph=True), starter.step, x, w,
                       case=T("{x}, {w} ({label})", zh="{x}，{w}（{label}）", x=describe_tensor("x", x),
                              w=describe_tensor("w", w), label=label))


def heavy_ops(entry, x, w) -> dict:
    """The matmuls and tanhs that really ran when the judge ran your captured graph on (x, w)."""
    compiled = entry.compile(fullgraph=True)
    compiled(x, w)
    index = len(compiled.graphs) - 1
    _, ran = run_sealed(lambda *values: executed_ops(compiled.graph_modules[index], *values),
                        compiled.inputs_for(index, x, w), what=T("your step's graph", zh="你的 step 的图"))
    return {name.split(".")[1]: ran[name] for name in HEAVY if ran[name]}


def test_untaken_branch_costs_nothing(entry):
    """Without an outlier the graph runs no matmul and no tanh of refine
    zh: 没有离群值时，图里不执行 refine 的任何 matmul 和 tanh
    """
    x, w = inputs(0.9)
    heavy = heavy_ops(entry, x, w)
    if heavy:
        ran = ", ".join(f"{name} x{n}" for name, n in sorted(heavy.items()))
        raise WrongAnswer(T("without an outlier ({x}) your graph still ran refine's work: `{ran}`; torch.where "
                            "and arithmetic masks compute both sides, torch.cond runs only the branch taken",
                            zh="没有离群值（{x}）时你的图仍然执行了 refine 的计算：`{ran}`；torch.where 和算术掩码"
                               "两边都算，torch.cond 只执行选中的分支", x=describe_tensor("x", x), ran=ran))
