"""Hidden tests for graph-break-three: no break at all, no host sync, same numbers on both branches.

The runner compiles forward and sends back the graph Dynamo captured; every numeric check runs that graph here,
on inputs the runner never saw (it gets other values of the same shapes), and each call must run exactly one
graph. The structural checks (the graph-break log, one graph, no host sync) read what the runner reports and
can only fail a submission; what makes it pass is that single graph giving the original's numbers here.
"""

import contextlib
import io

import torch

from judge.checks import (
    GraphBreak,
    assert_no_host_sync,
    assert_same,
    assert_same_result,
    compile_one_graph,
    describe_tensor,
    find_graph_breaks,
)
from judge.checks.trust import rests_on_learner_process
from judge.reports.i18n import T

EXACTLY_10 = T("max |x @ w| exactly 10", zh="max |x @ w| 恰好为 10")


def scaled_inputs(max_abs, shape=(6, 16, 8), dtype=torch.float32):
    """Random x, w with x @ w scaled so that its largest absolute value is about `max_abs`, at a positive entry."""
    b, k, n = shape
    x, w = torch.randn(b, k, dtype=dtype), torch.randn(k, n, dtype=dtype)
    h = (x @ w).flatten()
    peak = h[h.abs().argmax()]
    return x * (max_abs / peak), w


def picked_inputs(corner, dtype=torch.float32):
    """Rows of x pick rows of an integer w, so x @ w is exact: the largest |h| is `corner` (10 or -20), at a row and
    column drawn per grading, never the first row or column nor the last column (a branch decided by one row,
    column or element of h was ACCEPTED while the corner sat at [0, 0])."""
    x = torch.zeros(3, 4, dtype=dtype)
    x[0, 0] = x[1, 1] = x[2, 2] = 1
    w = torch.randint(-9, 10, (4, 5)).to(dtype)
    row, column = int(torch.randint(1, 3, ())), int(torch.randint(1, 4, ()))
    w[row, column] = corner
    return x, w


def compiled(entry):
    """forward compiled in the runner; each call runs the captured graph here, on the test's own inputs."""
    return entry.compile(fullgraph=True)


def original(starter):
    """The original forward, its debug print silenced (the helpers call it on copies, before your graph runs)."""
    def forward(x, w):
        with contextlib.redirect_stdout(io.StringIO()):
            return starter.forward(x, w)
    return forward


def case_of(x, w, note):
    return T("{x}, {w} ({note})", zh="{x}，{w}（{note}）", x=describe_tensor('x', x), w=describe_tensor('w', w),
             note=note)


@rests_on_learner_process(T(
    "Dynamo's graph-break log of a compile without fullgraph, as your process reported it: a break skipped "
    "there leaves no graph behind (the fullgraph checks, run on a graph here, say the same)",
    zh="不用 fullgraph 编译时 Dynamo 的 graph break 日志，由你的进程报告：在那里被跳过的断点不会留下图"
       "（用 fullgraph 的检查在本方的图上给出同样的结论）"))
def test_no_graph_breaks(entry):
    """Dynamo's graph-break log shows no break at all (the print on the first line included)
    zh: Dynamo 的 graph break 日志里一个断点也没有（包括第一行的 print）
    """
    x, w = scaled_inputs(20)
    breaks = find_graph_breaks(entry, x, w)
    if breaks:
        where = [T("line {line} (`{text}`)", zh="第 {line} 行（`{text}`）", line=b.location.line, text=b.location.text)
                 if b.location else T("outside your file", zh="在你的文件之外") for b in breaks]
        raise GraphBreak(T("Dynamo broke the graph {n} time(s): {where}. First: {first}",
                           zh="Dynamo 断开了图 {n} 次：{where}。第一个：{first}",
                           n=len(breaks), where=T.join(where, sep="; "), first=breaks[0].text("explanation")), breaks)


def test_one_graph(entry):
    """torch.compile(forward, fullgraph=True) captures exactly one graph
    zh: torch.compile(forward, fullgraph=True) 只捕获一张图
    """
    compile_one_graph(entry, *scaled_inputs(20))


def test_no_host_sync(entry):
    """The captured graph reads no tensor value into Python (.item(), .tolist())
    zh: 捕获的图不把张量的值读回 Python（.item()、.tolist()）
    """
    captured = compile_one_graph(entry, *scaled_inputs(5))
    assert_no_host_sync(captured.graphs, what=T("your forward's graph", zh="你的 forward 的图"))


def test_branch_taken(entry, starter):
    """Equal to the original when max |x @ w| > 10 (the original divides by 10)
    zh: max |x @ w| > 10 时与原函数相同（原函数除以 10）
    """
    fn = compiled(entry)
    for shape in [(6, 16, 8), (1, 4, 3), (32, 64, 16)]:
        x, w = scaled_inputs(20, shape)
        assert_same_result(fn, original(starter), x, w,
                    case=case_of(x, w, T("max |x @ w| about 20, at a positive entry",
                                              zh="max |x @ w| 约为 20，出现在一个正元素上")))


def test_branch_not_taken(entry, starter):
    """Equal to the original when max |x @ w| < 10 (h is left as it is)
    zh: max |x @ w| < 10 时与原函数相同（h 保持不变）
    """
    fn = compiled(entry)
    for shape in [(6, 16, 8), (2, 3, 5)]:
        x, w = scaled_inputs(5, shape)
        assert_same_result(fn, original(starter), x, w,
                    case=case_of(x, w, T("max |x @ w| about 5, at a positive entry",
                                              zh="max |x @ w| 约为 5，出现在一个正元素上")))


def test_large_negative(entry, starter):
    """Equal to the original when the largest |value| is negative (-20) and every positive one is below 10
    zh: 绝对值最大的元素为负（-20）、所有正元素都小于 10 时，与原函数相同
    """
    x, w = picked_inputs(-20)
    assert_same_result(compiled(entry), original(starter), x, w,
                case=case_of(x, w, T("x @ w has -20; its positive values are all below 10",
                                     zh="x @ w 含有 -20；它的正元素都小于 10")))


def test_max_exactly_10(entry, starter):
    """Equal to the original when max |x @ w| is exactly 10 (the original does not divide)
    zh: max |x @ w| 恰好为 10 时与原函数相同（原函数不做除法）
    """
    x, w = picked_inputs(10)
    assert (x @ w).abs().max().item() == 10, "test inputs are broken"
    assert_same_result(compiled(entry), original(starter), x, w, case=case_of(x, w, EXACTLY_10))


def just_above_10(fn, starter, dtype):
    """max |x @ w| at the next float above 10, and at a value drawn in (10, 10.5]: the original divides."""
    drawn = 10 + 0.5 * (1 - float(torch.rand(())))
    next_float = float(torch.nextafter(torch.tensor(10.0, dtype=dtype), torch.tensor(11.0, dtype=dtype)))
    for corner in (next_float, drawn):
        x, w = picked_inputs(corner, dtype)
        assert (x @ w).abs().max().item() > 10, "test inputs are broken"
        note = T("max |x @ w| = {m}, just above 10", zh="max |x @ w| = {m}，刚好超过 10",
                 m=T.same(repr(float((x @ w).abs().max()))))
        assert_same_result(fn, original(starter), x, w, case=case_of(x, w, note))


def test_just_above_10(entry, starter):
    """Equal to the original when max |x @ w| is just above 10 (the next float, and a value drawn in (10, 10.5]):
    the original divides
    zh: max |x @ w| 刚好超过 10 时（下一个浮点数，以及在 (10, 10.5] 中抽取的值）与原函数相同：原函数做除法
    """
    just_above_10(compiled(entry), starter, torch.float32)


@rests_on_learner_process(T(
    "the value an eager call of `forward` returned, as your process reported it: the eager path runs no graph "
    "(it can only fail the check)",
    zh="eager 调用 `forward` 的返回值，由你的进程报告：eager 路径不运行任何图（它只能让检查失败）"))
def test_eager_call(entry, starter):
    """Called without torch.compile, forward returns what the original returns too
    zh: 不经 torch.compile 直接调用时，forward 的返回值也与原函数相同
    """
    for max_abs in (20, 5):
        x, w = scaled_inputs(max_abs)
        expected = original(starter)(x.clone(), w.clone())  # before x and w leave this side
        got = entry(x, w, what=T("`forward(x, w)` called eagerly", zh="eager 调用的 `forward(x, w)`"))
        assert_same(got, expected, case=case_of(x, w, T("max |x @ w| about {m}, `forward` called eagerly",
                                                        zh="max |x @ w| 约为 {m}，eager 调用 `forward`", m=max_abs)))


def test_float64(entry, starter):
    """float64 inputs give float64 results equal to the original, on both branches, at 10 and just above it
    zh: float64 输入在两个分支上、恰好为 10 和刚好超过 10 时，都得到与原函数相同的 float64 结果
    """
    fn = compiled(entry)
    for max_abs in (20, 5):
        x, w = scaled_inputs(max_abs, dtype=torch.float64)
        note = T("max |x @ w| about {m}", zh="max |x @ w| 约为 {m}", m=max_abs)
        assert_same_result(fn, original(starter), x, w, case=case_of(x, w, note))
    x, w = picked_inputs(10, dtype=torch.float64)
    assert_same_result(fn, original(starter), x, w, case=case_of(x, w, EXACTLY_10))
    just_above_10(fn, starter, torch.float64)
