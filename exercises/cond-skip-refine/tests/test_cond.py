"""Hidden tests for cond-skip-refine: one graph, the original's numbers, and refine costs nothing when not taken."""

import pytest
import torch

from judge import remote
from judge.checks import WrongAnswer, assert_no_host_sync, assert_same_result, compile_one_graph, describe_tensor
from judge.checks.instrument import executed_work, opaque
from judge.checks.sealed import run_sealed
from judge.reports.i18n import T

HEAVY = ("aten.mm.default", "aten.addmm.default", "aten.bmm.default", "aten.matmul.default", "aten.tanh.default")
# Without an outlier, the graph's total work (judge.checks.instrument.work: whatever its operators are called) may be
# at most this many times the original's, which skips refine: torch.cond's copy of h costs a quarter more; refine's
# matmuls, however spelled, cost D times more.
WORK_FACTOR = 2


def inputs(largest: float, dtype=torch.float32, shape=(6, 16), at=(-1, 3)):
    """x in [-1, 1] with the entry `at` set to `largest` (h = 2x: refine runs when 2 * largest > 4), w small."""
    x = torch.rand(shape, dtype=dtype) * 2 - 1
    x[at] = largest
    return x, torch.randn(shape[1], shape[1], dtype=dtype) * 0.3


CASES = {
    "refined": (lambda: inputs(3.0), T("an outlier: refine runs", zh="有离群值：要执行 refine")),
    "plain": (lambda: inputs(0.9), T("no outlier: refine is skipped", zh="没有离群值：跳过 refine")),
    "boundary": (lambda: inputs(2.0), T("largest |h| exactly 4.0: not refined", zh="|h| 的最大值恰好是 4.0：不 refine")),
    "just_above": (lambda: inputs(float(torch.nextafter(torch.tensor(2.0), torch.tensor(3.0)))),
                   T("largest |h| just above 4.0 (the next float32): refine runs",
                     zh="|h| 的最大值刚好大于 4.0（下一个 float32）：要执行 refine")),
    "drawn_above": (lambda: inputs(2.0 + 0.5 * (1 - float(torch.rand(())))),
                    T("largest |h| drawn in (4.0, 5.0]: refine runs", zh="|h| 的最大值在 (4.0, 5.0] 中随机抽取：要执行 refine")),
    "float64": (lambda: inputs(3.0, torch.float64), T("float64, an outlier", zh="float64，有离群值")),
    "float64_just_above": (lambda: inputs(float(torch.nextafter(torch.tensor(2.0, dtype=torch.float64),
                                                                torch.tensor(3.0, dtype=torch.float64))),
                                          torch.float64),
                           T("float64, largest |h| just above 4.0 (the next float64): refine runs",
                             zh="float64，|h| 的最大值刚好大于 4.0（下一个 float64）：要执行 refine")),
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


def heavy_ops(entry, x, w) -> tuple[dict, int]:
    """The matmuls and tanhs that really ran when the judge ran your captured graph on (x, w), inside the bodies of
    higher-order operators too, and the total work of what ran; a body the counter cannot enter fails the check (it
    is never taken as free)."""
    compiled = entry.compile(fullgraph=True)
    compiled(x, w)
    index = len(compiled.graphs) - 1
    _, ran, work = run_sealed(lambda *values: executed_work(compiled.graph_modules[index], *values),
                             compiled.inputs_for(index, x, w), what=T("your step's graph", zh="你的 step 的图"))
    unseen = opaque(ran)
    if unseen:
        raise WrongAnswer(T("your graph calls `{hops}`, a higher-order operator whose body the judge cannot count: "
                            "what runs inside it is unknown, so this cost check cannot pass. Use torch.cond.",
                            zh="你的图调用了 `{hops}`，这个高阶算子的内部评测无法计数：不知道里面执行了什么，"
                               "所以这项开销检查不能通过。请用 torch.cond。", hops=", ".join(unseen)))
    return {name.split(".")[1]: ran[name] for name in HEAVY if ran[name]}, work


def drawn_shape() -> tuple[tuple[int, int], torch.dtype]:
    """The second shape and dtype the cost is measured on, drawn per grading: rows 1..48, features 4..32, float32
    or float64 (the statement leaves both free), so that no file can know it."""
    gen = remote.grading().drawn("cost shape")
    rows, features = (int(torch.randint(lo, hi + 1, (), generator=gen)) for lo, hi in ((1, 48), (4, 32)))
    dtype = (torch.float32, torch.float64)[int(torch.randint(0, 2, (), generator=gen))]
    if (rows, features, dtype) == (6, 16, torch.float32):  # never the named one again
        dtype = torch.float64
    return (rows, features), dtype


def planted(largest: float | None, dtype=torch.float32, shape=(6, 16)):
    """Inputs without an outlier whose largest entry is `largest` (None: drawn in [0, 2], h up to the threshold 4),
    at a drawn place: a file cannot tell the inputs its cost is measured on from any other (the test's draw is the
    grading's, judge/verifier_side/fixtures.py)."""
    at = tuple(int(torch.randint(0, n, ())) for n in shape)
    return inputs(float(torch.rand(()) * 2) if largest is None else largest, dtype, shape, at=at)


def test_untaken_branch_costs_nothing(entry, starter):
    """Without an outlier the graph runs no matmul and no tanh of refine, nor as much work in other operators, on
    x [6, 16] (largest |h| drawn, and exactly 4.0) and a shape drawn per grading
    zh: 没有离群值时，图里不执行 refine 的任何 matmul 和 tanh，也不用别的算子做同样多的计算，在 x [6, 16]（最大的 |h| 随机抽取，以及恰好是 4.0）和每次评测抽取的形状上都是如此
    """
    shape, dtype = drawn_shape()
    for x, w in (planted(None), planted(2.0), planted(None, dtype, shape)):
        heavy, work = heavy_ops(entry, x, w)
        if heavy:
            ran = ", ".join(f"{name} x{n}" for name, n in sorted(heavy.items()))
            raise WrongAnswer(T("without an outlier ({x}) your graph still ran refine's work: `{ran}`; torch.where "
                                "and arithmetic masks compute both sides, torch.cond runs only the branch taken",
                                zh="没有离群值（{x}）时你的图仍然执行了 refine 的计算：`{ran}`；torch.where 和算术掩码"
                                   "两边都算，torch.cond 只执行选中的分支", x=describe_tensor("x", x), ran=ran))
        original = executed_work(starter.step, x.clone(), w.clone())[2]
        if work > WORK_FACTOR * original:
            raise WrongAnswer(T("without an outlier ({x}) your graph did {work} elementary operations, the original "
                                "{original}, which skips refine: refine's work still ran, in operators of other "
                                "names (a matmul spelled as a multiply and a sum costs as much). torch.cond runs only "
                                "the branch taken",
                                zh="没有离群值（{x}）时你的图做了 {work} 次基本运算，跳过 refine 的原函数只做 {original} 次："
                                   "refine 的计算仍然执行了，只是换了名字的算子（把 matmul 写成乘法加求和，开销一样）。"
                                   "torch.cond 只执行选中的分支",
                                x=describe_tensor("x", x), work=work, original=original))
