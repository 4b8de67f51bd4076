"""Hidden tests for bucket-padding: at most 3 static shapes reach the grader's core over T = 1..64, exact results.

`core_fn` is an operator (public.py): the runner compiles serve(core_fn, x) with fullgraph=True and
dynamic=False, so the graph it sends back holds the learner's padding and one opaque call of core_fn. That
graph runs here, where core_fn is this side's own kernel: it notes every shape it receives (each distinct
shape is one static compile of core) and computes core itself, or core + 1000, or core compiled by Inductor.
"""

import pytest
import torch

from judge import remote
from judge.checks import (
    Provided,
    Recompile,
    WrongAnswer,
    assert_result_flows_through,
    assert_same,
    describe_tensor,
    pristine,
)
from judge.checks.serving import assert_static_graphs
from judge.reports.i18n import T
from judge.reports.report import RecompileDiagnostic

B, D = 3, 8
# Every length 1..64, in an order that does not start at the smallest.
ALL_LENGTHS = [37, 1, 64, 2, 16, 17, 33, 32, 15, 63] + [t for t in range(1, 65)
                                                       if t not in (37, 1, 64, 2, 16, 17, 33, 32, 15, 63)]
SOME_LENGTHS = [1, 2, 7, 16, 17, 31, 33, 50, 64]
_EVERY_LENGTH: list = []  # (x, served, expected) for every length, kept by test_at_most_three_graphs


def core(x):
    """The grader's own copy of `core`: the learner's file cannot change what core_fn computes."""
    return (x.softmax(1) * x).sum(1)


class Core:
    """This side's kernel of torch.ops.practice.core: what it computes now, and the shapes it received."""

    fn = staticmethod(core)
    seen: list = []
    registered = False


# core_fn as this side runs it: `Core.fn`, or another function of x while `CORE.replaced()` (the provenance check)
CORE = Provided(lambda x: Core.fn(x), name=T.same("`core_fn`"))


@pytest.fixture
def core_kernel(public):
    """Run core_fn with this side's kernel (public.py registered the operator here too)."""
    if not Core.registered:
        public.core_op.register_kernel("cpu")(lambda x: (Core.seen.append(tuple(x.shape)), CORE(x))[1])
        Core.registered = True
    Core.fn, Core.seen = core, []
    yield Core
    Core.fn = core


def serve_all(entry, lengths, dtype=torch.float32, scale=1.0, require_core=True, b=B, d=D, expected_fn=core,
              below=None):
    """(x, served output, expected) for each length; each length compiles serve afresh (one static graph per T)
    and runs that graph here, after `expected_fn` (core on the unpadded x) ran on a copy of x. Fails if serve marks
    a dimension dynamic, or (require_core) never reaches core_fn. `below`: one column of x lies wholly below
    -below (between -4 * below and -below), so that a fill value above it wins that column's softmax whatever the
    draw (x's other values are random: a column entirely below a fill is otherwise luck)."""
    results = []
    for t in lengths:
        x = torch.randn(b, t, d, dtype=dtype) * scale
        if below is not None:  # (short of the dtype's minimum: float16's is within reach)
            limit = min(3 * below, 0.9 * (float(torch.finfo(dtype).max) - below))
            x[:, :, 0] = -(x[:, :, 0].abs().clamp(max=limit) + below)
        remote.reset_runner()  # a fresh Dynamo cache: 64 static graphs of serve exceed its recompile limit
        compiled = entry.compile(fullgraph=True, dynamic=False,
                                 what=T("`serve(core_fn, x)` with {x}", zh="输入为 {x} 的 `serve(core_fn, x)`",
                                        x=describe_tensor('x', x)))
        expected = pristine(expected_fn(pristine(x)))
        before = len(Core.seen)
        try:
            out = compiled(remote.public("core_fn"), x)
        except remote.LearnerError as exc:
            if "forbidden callable" in str(exc.message) and "mark_" in str(exc.message):
                raise WrongAnswer(T("`serve` marks a dimension dynamic (`torch._dynamo.mark_dynamic` and friends): "
                                    "core's graphs would no longer be static, since a mark overrides `dynamic=False`. "
                                    "This exercise is about static graphs: pad T up to a few bucket sizes instead.",
                                    zh="`serve` 把某一维标成了动态（`torch._dynamo.mark_dynamic` 之类）：标记会盖过 "
                                       "`dynamic=False`，core 的图就不再是静态的了。本题练的是静态图：改成把 T 补齐到"
                                       "少数几档。"),
                                  exc.diagnostics) from None
            raise
        if require_core and len(Core.seen) == before:
            raise WrongAnswer(T("`serve(core_fn, x)` with {x} never called `core_fn`: the work must go through "
                                "the core the grader passes in.",
                                zh="输入为 {x} 时 `serve(core_fn, x)` 没有调用 `core_fn`：计算必须经过判题方传进来的 core。",
                                x=describe_tensor('x', x)))
        assert_static_graphs(compiled.graph_modules, what=T.same("`serve`"))
        results.append((x, out, expected))
    return results


def test_graphs_are_static(entry, core_kernel):
    """Every shape that reaches core is static
    zh: 送到 core 的每个形状都是静态的
    """
    serve_all(entry, SOME_LENGTHS, require_core=False)


def test_at_most_three_graphs(entry, core_kernel):
    """Lengths 1..64 compile the grader's core at most 3 times
    zh: 长度 1..64 最多让判题方的 core 编译 3 次
    """
    _EVERY_LENGTH[:] = serve_all(entry, ALL_LENGTHS)
    shapes = sorted(set(core_kernel.seen))
    if len(shapes) > 3:
        sizes = sorted({shape[1] for shape in shapes if len(shape) > 1})
        shown = ", ".join(map(str, sizes[:12])) + (", ..." if len(sizes) > 12 else "")
        raise Recompile(T("core was compiled {n} times over the lengths 1..64 (`core_fn` was called with {n} "
                          "distinct shapes, T = {shown}); at most 3 static graphs are allowed. Pad every T up to one "
                          "of at most 3 bucket sizes.",
                          zh="在长度 1..64 上 core 编译了 {n} 次（`core_fn` 收到了 {n} 种不同的形状，T = {shown}）；"
                             "最多只允许 3 张静态图。把每个 T 补齐到至多 3 档中的一档。", n=len(shapes), shown=shown),
                        [RecompileDiagnostic(compiles=len(shapes), limit=3,
                                             guard_failures=[f"x of shape {list(s)}" for s in shapes[:10]])])


def test_same_as_unpadded(entry, core_kernel):
    """Served results equal core on the unpadded input
    zh: 服务的结果与 core 在未补齐的输入上的结果相同
    """
    for x, out, expected in serve_all(entry, SOME_LENGTHS):
        assert_same(out, expected, case=describe_tensor("x", x, T.same(f"T = {x.shape[1]}")))


def test_result_comes_from_core_fn(entry, core_kernel):
    """serve returns what core_fn computes
    zh: serve 返回的是 core_fn 算出的结果
    """
    def served(x):
        remote.reset_runner()
        return entry.compile(fullgraph=True, dynamic=False,
                             what=T.same("`serve(core_fn, x)`"))(remote.public("core_fn"), x)

    for t in (4, 20, 64):
        x = torch.randn(B, t, D)
        for by in (None, reweighted()):
            assert_result_flows_through(CORE, served, CORE, x, by=by, case=describe_tensor("x", x, T(
                "T = {t}; `core_fn` replaced by another function of x, and `serve` must return its result",
                zh="T = {t}；`core_fn` 换成了 x 的另一个函数，`serve` 必须返回它的结果", t=t)))


def reweighted():
    """core with its values bent by a drawn wave: softmax(x) * (x + e sin(a x + b)) summed over T. Rows whose softmax
    weight is 0 (a correct padding) still add nothing, so serve's result must be this function of the unpadded x;
    a graph that calls core_fn on another input and carries its deviation from an inline copy of core over to
    core(x) (the default replacement moves each element by a drawn multiple of the tolerance, which such a graph
    can rescale) carries the wave at the wrong places (`wrong/transplanted_perturbation.py`)."""
    a, b, e = 1 + 4 * float(torch.rand(())), 6.28 * float(torch.rand(())), 0.05 + 0.1 * float(torch.rand(()))

    def by(x):
        return (x.softmax(1) * (x + e * torch.sin(a * x.clamp(-1e4, 1e4) + b))).sum(1)
    return by


def test_large_values(entry, core_kernel):
    """Exact results when |x| is as large as 1e5
    zh: |x| 大到 1e5 时结果依然准确
    """
    # one column wholly below -7e4, so below float16's minimum -65504 whatever the draw
    for x, out, expected in serve_all(entry, [3, 20, 40], scale=1e5, below=7e4):
        assert_same(out, expected, case=describe_tensor("x", x, T("values up to about 1e5 in magnitude",
                                                                 zh="数值的绝对值可达约 1e5")))


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16],
                         ids=["float64", "bfloat16", "float16"])
def test_other_dtypes(entry, core_kernel, dtype):
    """float64, bfloat16 and float16 inputs give the unpadded results in their own dtype
    zh: float64、bfloat16 和 float16 输入得到与未补齐时相同、dtype 不变的结果
    """
    for x, out, expected in serve_all(entry, [1, 10, 40], dtype=dtype):
        assert_same(out, expected, case=describe_tensor("x", x, T.same(f"T = {x.shape[1]}")))


@pytest.mark.parametrize("b, d", [(1, 16), (5, 3)], ids=["B1-D16", "B5-D3"])
def test_other_sizes(entry, core_kernel, b, d):
    """Other batch sizes and widths give the unpadded results
    zh: 换一个批大小和宽度，结果同样与未补齐时相同
    """
    for x, out, expected in serve_all(entry, [1, 20, 64], b=b, d=d):
        assert_same(out, expected, case=describe_tensor("x", x, T.same(f"T = {x.shape[1]}")))


def test_inductor(entry, core_kernel):
    """With a real Inductor compile of core, served results equal the unpadded ones
    zh: 用真正的 Inductor 编译 core 时，服务的结果与未补齐时相同
    """
    from judge.checks import CompileCounter

    counter = CompileCounter("inductor")
    core_kernel.fn = torch.compile(core, backend=counter, dynamic=False)
    for x, out, expected in serve_all(entry, [5, 11]):
        assert_same(out, expected, case=describe_tensor("x", x, T.same(f"T = {x.shape[1]}, backend inductor")))
    if counter.frame_count > 2:
        raise Recompile(T("with Inductor, core was compiled {n} times for T = 5 and T = 11; padding to buckets "
                          "should need at most 2.",
                          zh="用 Inductor 时，T = 5 和 T = 11 让 core 编译了 {n} 次；补齐到分档最多只需要 2 次。",
                          n=counter.frame_count))


def test_float16_large_values(entry, core_kernel):
    """float16 inputs as large as float16 allows (|x| up to about 4e4) give the unpadded results
    zh: float16 输入大到 float16 允许的范围（|x| 可达约 4e4）时，结果与未补齐时相同
    """
    for x, out, expected in serve_all(entry, [3, 20, 40], dtype=torch.float16, scale=1e4, below=1.5e4):
        assert_same(out, expected, case=describe_tensor("x", x, T("float16 values up to about 4e4 in magnitude",
                                                                 zh="float16 数值的绝对值可达约 4e4")))
    # one column within about 1e3 of float16's minimum -65504: a fill computed below the input overflows to -inf
    for x, out, expected in serve_all(entry, [3, 40], dtype=torch.float16, scale=300, below=6.45e4):
        assert_same(out, expected, case=describe_tensor("x", x, T("a float16 column near float16's minimum",
                                                                 zh="有一列 float16 数值接近 float16 的最小值")))


def test_bfloat16_large_values(entry, core_kernel):
    """bfloat16 inputs with magnitudes up to about 1e5 (past float16's range) give the unpadded results
    zh: bfloat16 输入的绝对值可达约 1e5（超出 float16 的范围）时，结果与未补齐时相同
    """
    # one column wholly in [-1.1e5, -6.6e4]: below float16's minimum -65504
    for x, out, expected in serve_all(entry, [3, 20, 40], dtype=torch.bfloat16, scale=1e4, below=6.6e4):
        assert_same(out, expected, case=describe_tensor("x", x, T("bfloat16 values up to about 1e5 in magnitude",
                                                                 zh="bfloat16 数值的绝对值可达约 1e5")))


def test_every_length(entry, core_kernel):
    """Every length 1..64 gives core's result, not only the lengths compared above
    zh: 长度 1..64 的每一个都得到 core 的结果，而不只是上面比较过的那些长度
    """
    for x, out, expected in _EVERY_LENGTH or serve_all(entry, ALL_LENGTHS):
        assert_same(out, expected, case=describe_tensor("x", x, T.same(f"T = {x.shape[1]}")))
