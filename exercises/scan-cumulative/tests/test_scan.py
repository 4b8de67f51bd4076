"""Hidden tests for scan-cumulative: one graph for every length T, the loop body traced once.

ema is compiled in the runner with fullgraph=True and dynamic=True; the graph comes back and runs here on this
side's inputs for every length: a graph with the loop unrolled holds T as a constant and refuses the other lengths
here, so one graph passes only by looping inside the graph (or by needing no loop). Its size is counted on that
same graph, subgraphs included.
"""

import torch

from judge.checks import Recompile, WrongAnswer, assert_same
from judge.checks.serving import short_guard
from judge.reports.i18n import T
from judge.reports.report import RecompileDiagnostic

D = 8
LENGTHS = [16, 64, 5, 200, 2, 33]
LONGER = (257, 512)  # the numbers are also checked at a length drawn here, past the schedule's longest and past 256
MAX_NODES = 60  # the scan form holds about 12 nodes with its body, the decay matrix about 20
WHAT = T("`ema`, compiled with `fullgraph=True, dynamic=True`,", zh="以 `fullgraph=True, dynamic=True` 编译的 `ema`")


def inputs(t, dtype=torch.float32, low=0.05, high=0.95):
    x = torch.randn(t, D, dtype=dtype)
    decay = (torch.rand(D, dtype=dtype) * (high - low) + low)
    return x, decay


def case(x) -> T:
    return T.same(f"x [{x.shape[0]}, {D}] {str(x.dtype).removeprefix('torch.')} (T = {x.shape[0]})")


def served(entry, lengths=LENGTHS):
    compiled = entry.compile(fullgraph=True, dynamic=True, what=WHAT)
    for t in lengths:
        compiled(*inputs(t))
        if compiled.frame_count > 1:
            guards = [short_guard(r) for r in compiled.recompile_reasons]
            message = T("{what} was compiled again for T = {t}; one graph must serve every length (a Python loop "
                        "over `range(T)` is unrolled into T copies of its body, with T as a constant). The guard that "
                        "failed: `{guard}`",
                        zh="{what}在 T = {t} 时又编译了一次；一张图必须服务所有长度（对 `range(T)` 的 Python 循环会被"
                           "展开成循环体的 T 份拷贝，T 成了常量）。失败的 guard：`{guard}`",
                        what=WHAT, t=t, guard=guards[0] if guards else "?")
            raise Recompile(message, [RecompileDiagnostic(compiles=compiled.frame_count, limit=1,
                                                          guard_failures=guards[:10])])
    return compiled


def nodes(gm: torch.fx.GraphModule) -> int:
    """Nodes of a graph and of every subgraph it reads (a scan's body counted once)."""
    count = 0
    for node in gm.graph.nodes:
        count += 1
        sub = getattr(gm, str(node.target), None) if node.op == "get_attr" else None
        if isinstance(sub, torch.fx.GraphModule):
            count += nodes(sub)
    return count


def test_one_graph_for_every_length(entry):
    """One graph serves T = 16, 64, 5, 200, 2 and 33
    zh: 一张图服务 T = 16、64、5、200、2 和 33
    """
    served(entry)


def test_graph_does_not_grow(entry):
    """The graph (its loop body included) stays small: at most 60 nodes, whatever T
    zh: 图（包括循环体）保持很小：无论 T 多大，最多 60 个节点
    """
    compiled = served(entry, LENGTHS[:2])
    size = nodes(compiled.graph_modules[0])
    if size > MAX_NODES:
        raise WrongAnswer(T("the graph holds {size} nodes (its subgraphs included); a loop whose body is traced "
                            "once holds a few dozen at most ({limit}). An unrolled loop grows with T: use "
                            "`torch._higher_order_ops.scan.scan`",
                            zh="图里有 {size} 个节点（包括子图）；循环体只追踪一次的图最多几十个（{limit}）。展开的循环随 T "
                               "增长：请用 `torch._higher_order_ops.scan.scan`", size=size, limit=MAX_NODES))


def test_same_numbers(entry, starter):
    """Every length gives the eager running average, T = 1, a length longer than the schedule's and float64
    included, decay near 0 and near 1
    zh: 每个长度都给出与 eager 相同的滑动平均，包括 T = 1、比调用序列更长的长度与 float64，decay 接近 0 和接近 1
    """
    compiled = entry.compile(fullgraph=True, dynamic=True, what=WHAT)
    longer = int(torch.randint(LONGER[0], LONGER[1] + 1, ()))  # drawn per grading: no file knows the longest length
    cases = [inputs(t) for t in (7, 1, 64, 200, longer)] + [inputs(40, torch.float64),
                                                              inputs(50, low=0.001, high=0.01),
                                                              inputs(50, low=0.99, high=0.999)]
    for x, decay in cases:
        expected = starter.ema(x, decay)
        assert_same(compiled(x, decay), expected, case=case(x))
