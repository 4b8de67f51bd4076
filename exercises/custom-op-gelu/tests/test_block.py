"""Hidden tests for custom-op-gelu: one graph with an ext.* op, its fake implementation, same numbers under
dynamic shapes.

The learner's ext operator lives in the runner; the judge never runs it. Before a graph that calls
`torch.ops.ext.<name>` is rebuilt here, the judge registers that name here with its own implementation: the
vendor kernel of the starter (`fast_gelu_ext`) and a fake that returns `empty_like(x)`. So every number
compared below is computed here. The learner's fake implementation is judged from what Dynamo recorded while
tracing with it (the op node's output shape and dtype in the captured graph), against the vendor kernel's real
output here; torch.library.opcheck, run on the learner's op in the runner (public.py), and an eager call of
the learner's block there can only make a check fail.
"""

import torch
import torch.fx

from judge import remote
from judge.checks import (
    Forbidden,
    Provided,
    WrongAnswer,
    assert_result_flows_through,
    assert_same_result,
    compile_one_graph,
    describe_tensor,
)
from judge.checks.custom_ops import OPCHECK_MEANING, assert_calls_custom_op
from judge.checks.trust import rests_on_learner_process
from judge.reports.i18n import T
from judge.reports.report import GraphDiagnostic

# (case, x and w whose product is the op's input): a [4, 8] float32, a [3, 5] float64, an empty and a 3-d input
OPCHECK_CASES = [
    (T.same("x [4, 8] float32"), lambda: (torch.randn(4, 6), torch.randn(6, 8))),
    (T.same("x [3, 5] float64"),
     lambda: (torch.randn(3, 6, dtype=torch.float64), torch.randn(6, 5, dtype=torch.float64))),
    (T("x [0, 8] float32 (empty)", zh="x [0, 8] float32（空张量）"), lambda: (torch.randn(0, 6), torch.randn(6, 8))),
    (T.same("x [2, 3, 4] float32"), lambda: (torch.randn(2, 3, 6), torch.randn(6, 4))),
]
SHAPES = [((4, 8), (8, 8)), ((1, 3), (3, 5)), ((7, 16), (16, 2)), ((5, 4), (4, 6))]

# What a failed opcheck sub-test means, in Chinese (judge/checks/custom_ops.py: OPCHECK_MEANING has the English)
OPCHECK_MEANING_ZH = {
    "test_schema": "算子做了 schema 没有声明的事：返回了输入本身（或它的视图），或者修改了输入却没写进 mutates_args",
    "test_autograd_registration": "算子的 autograd 注册不完整",
    "test_faketensor": "fake 实现（register_fake）没有如实描述真实输出：它的形状、dtype、设备或 stride 与真实内核的返回值不同",
    "test_aot_dispatch_dynamic": "用符号形状追踪（AOTAutograd，dynamic=True）时算子不能工作",
}


def meaning(test: str) -> T:
    """What a failed opcheck sub-test means, in both languages."""
    found = OPCHECK_MEANING.get(test, "")
    if isinstance(found, T):
        return found
    return T("{text}", zh=OPCHECK_MEANING_ZH.get(test, "{text}"), text=found)

# ---------------------------------------------------------------- the judge's own implementation of ext ops

_LIB = torch.library.Library("ext", "FRAGMENT")  # noqa: TOR901 - the verifier's own registrations
_PROVIDED: set[str] = set()


STARTER = remote.grading().exercise_module("starter")
vendor_kernel = STARTER.fast_gelu_ext  # the starter's fast_gelu_ext: what the learner's op must wrap
# What every torch.ops.ext.* call runs here, and what the original block calls: replaced by another function of x
# in `test_result_comes_from_the_op`, on both sides.
KERNEL = Provided(vendor_kernel, name=T("the `ext` op (`fast_gelu_ext`)", zh="`ext` 算子（`fast_gelu_ext`）"),
                  patch=[(STARTER, "fast_gelu_ext")])


def provide_ext(name: str, overload: str) -> None:
    """Register torch.ops.ext.<name>.<overload> here as (Tensor x) -> Tensor: the vendor kernel, and a fake."""
    qualified = name if overload == "default" else f"{name}.{overload}"
    if qualified in _PROVIDED:
        return
    _PROVIDED.add(qualified)
    _LIB.define(f"{qualified}(Tensor x) -> Tensor")
    _LIB.impl(qualified, lambda x: KERNEL(x), "CPU")
    torch.library.register_fake(f"ext::{qualified}", lambda x: torch.empty_like(x), lib=_LIB)


remote.grading().provide_operators("ext", provide_ext)

# ---------------------------------------------------------------- helpers


def captured_graph(entry, x, w):
    """The one graph Dynamo captures for block(x, w) (static shapes), rebuilt here."""
    try:
        return compile_one_graph(entry, x, w, dynamic=False,
                                 what=T.same("`torch.compile(block, fullgraph=True)`")).graphs[0]
    except Forbidden as exc:
        called = getattr(exc, "called", "") or ""
        if not called.startswith("torch.ops."):
            raise
        raise WrongAnswer(T("the graph of `block` calls no operator in the `ext` namespace (it calls `{called}`, "
                            "in another namespace): register the kernel with "
                            "`torch.library.custom_op(\"ext::<name>\", ...)` and call that op.",
                            zh="`block` 的图没有调用 `ext` 命名空间里的算子（它调用的是另一个命名空间的 `{called}`）："
                               "用 `torch.library.custom_op(\"ext::<name>\", ...)` 注册这个内核，再调用这个算子。",
                            called=called)) from None


def ext_node(entry, x, w) -> tuple[torch.fx.Node, torch._ops.OpOverload]:
    """The graph's one ext.* node; it must take the one tensor x @ w, as fast_gelu_ext does."""
    gm = captured_graph(entry, x, w)
    found = assert_calls_custom_op(gm, "ext", what=T("the graph of `block`", zh="`block` 的图"))
    node, op = found[0]
    if len(node.args) != 1 or not isinstance(node.args[0], torch.fx.Node) or node.kwargs:
        raise WrongAnswer(T("the graph calls `{op}` with {n} arguments; the op wraps `fast_gelu_ext`, so it takes "
                            "one tensor (`x @ w`) and returns one tensor.",
                            zh="图调用 `{op}` 时传了 {n} 个参数；这个算子包装的是 `fast_gelu_ext`，"
                               "所以它只接收一个张量（`x @ w`），返回一个张量。",
                            op=op, n=len(node.args) + len(node.kwargs)),
                          [GraphDiagnostic(title=T("captured graph", zh="捕获的图"), code=gm.code.strip(),
                                           highlight=[node.name])])
    return node, op


def recorded_value(node: torch.fx.Node) -> dict:
    """What Dynamo recorded for a node's value while tracing: {"shape": [...], "dtype": "float32"}."""
    value = node.meta.get("ir", {}).get("value")
    return value if isinstance(value, dict) else {}


def assert_fake_matches(node, op, sample: torch.Tensor, case: T) -> None:
    """The learner's fake output (recorded by Dynamo) has the shape and dtype of the vendor kernel's output."""
    real = vendor_kernel(sample)
    fake = recorded_value(node)
    real_text = f"{str(real.dtype).removeprefix('torch.')} {list(real.shape)}"
    fake_text = f"{fake.get('dtype', '?')} {fake.get('shape', '?')}"
    if fake.get("shape") != list(real.shape) or fake.get("dtype") != str(real.dtype).removeprefix("torch."):
        raise WrongAnswer(T("`torch.library.opcheck({op})` on {case}: `test_faketensor` failed: {meaning}. While "
                            "tracing, your fake implementation said the output is `{fake}`; the kernel returns "
                            "`{real}`.",
                            zh="`torch.library.opcheck({op})` 在 {case} 上：`test_faketensor` 失败：{meaning}。"
                               "追踪时你的 fake 实现说输出是 `{fake}`；内核实际返回 `{real}`。",
                            op=op, case=case, meaning=meaning("test_faketensor"), fake=fake_text, real=real_text))


def assert_learner_opcheck(op, sample: torch.Tensor, case: T) -> None:
    """torch.library.opcheck on the learner's own op, in the runner: a failure it reports fails the check."""
    results = remote.call(remote.public("opcheck"), op._opname, op._overloadname, sample,
                          what=T.same(f"`torch.library.opcheck({op})`"))
    if not isinstance(results, dict):
        raise remote.Protocol(T("malformed `opcheck` report", zh="`opcheck` 的报告格式有误"))
    for test, outcome in results.items():
        if outcome == "SUCCESS":
            continue
        detail = str(outcome).strip().splitlines()[0][:400] if str(outcome).strip() else ""
        if test == "opcheck":
            raise WrongAnswer(T("`torch.library.opcheck({op})` on {case} failed: `{detail}`",
                                zh="`torch.library.opcheck({op})` 在 {case} 上失败：`{detail}`",
                                op=op, case=case, detail=detail))
        raise WrongAnswer(T("`torch.library.opcheck({op})` on {case}: `{test}` failed: {meaning}. Detail: `{detail}`",
                            zh="`torch.library.opcheck({op})` 在 {case} 上：`{test}` 失败：{meaning}。详情：`{detail}`",
                            op=op, case=case, test=test, meaning=meaning(str(test)), detail=detail))


def eager_block(entry):
    """block called eagerly in the runner, with the learner's own op kernel (it sees these inputs)."""
    what = T("`block` (eager, with your op's kernel)", zh="`block`（eager 调用，用你的算子自己的内核）")
    return lambda x, w: remote.call(entry, x, w, what=what)


def case_of(x, w) -> T:
    return T("{x}, {w}", zh="{x}，{w}", x=describe_tensor("x", x), w=describe_tensor("w", w))


# ---------------------------------------------------------------- checks


def test_one_graph_with_ext_op(entry):
    """torch.compile(block, fullgraph=True) captures one graph that calls an ext.* operator
    zh: torch.compile(block, fullgraph=True) 捕获一张调用 ext.* 算子的图
    """
    ext_node(entry, torch.randn(4, 8), torch.randn(8, 8))


@rests_on_learner_process(T(
    "the output shape and dtype your fake implementation gave while Dynamo traced, as recorded in your process: "
    "the fake exists only there (`torch.library.opcheck`, also run there, can only fail the check)",
    zh="Dynamo 追踪时你的 fake 实现给出的输出形状和 dtype，记录在你的进程里：fake 只存在于那里"
       "（同样在那里运行的 `torch.library.opcheck` 只能让检查失败）"))
def test_opcheck(entry):
    """torch.library.opcheck passes for the ext op on float32, float64, an empty and a 3-d input
    zh: ext 算子在 float32、float64、空张量和 3 维输入上都通过 torch.library.opcheck
    """
    _, op = ext_node(entry, torch.randn(4, 8), torch.randn(8, 8))
    for case, make in OPCHECK_CASES:
        x, w = make()
        sample = x @ w
        assert_learner_opcheck(op, sample, case)
        node, _ = ext_node(entry, x, w)  # Dynamo traces block with your fake on an input of this kind
        assert_fake_matches(node, op, sample, case)


def test_same_numbers_dynamic(entry, starter):
    """With dynamic=True the compiled block equals the original for several shapes
    zh: 用 dynamic=True 编译的 block 在多种形状上都与原函数相同
    """
    fn = entry.compile(fullgraph=True, dynamic=True)
    for x_shape, w_shape in SHAPES:
        x, w = torch.randn(x_shape), torch.randn(w_shape)
        assert_same_result(fn, starter.block, x, w, case=case_of(x, w))
    # Your op's own kernel, called eagerly in your process on these inputs: it can only fail the check.
    for x_shape, w_shape in SHAPES[:2]:
        x, w = torch.randn(x_shape), torch.randn(w_shape)
        assert_same_result(eager_block(entry), starter.block, x, w,
                           case=T("{case}, `block` called eagerly with your op's own kernel",
                                  zh="{case}，eager 调用 `block`，用你的算子自己的内核", case=case_of(x, w)))


def test_float64_and_empty(entry, starter):
    """float64 results for float64 inputs, also beyond float32's range; an empty batch gives an empty result
    zh: float64 输入得到 float64 结果，超出 float32 范围的值也一样；空 batch 得到空结果
    """
    fn = entry.compile(fullgraph=True, dynamic=True)
    for x, w in [(torch.randn(6, 4, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64)),
                 (torch.randn(0, 4), torch.randn(4, 3))]:
        assert_same_result(fn, starter.block, x, w, case=case_of(x, w))
    # float64 holds values float32 cannot: your op's own kernel, called eagerly in your process, must keep them
    x, w = torch.randn(6, 4, dtype=torch.float64) * 1e200, torch.randn(4, 3, dtype=torch.float64)
    assert_same_result(eager_block(entry), starter.block, x, w,
                       case=T("{case}, `x @ w` around 1e200 (beyond float32's range), `block` called eagerly with your "
                       "op's own kernel",
                       zh="{case}，`x @ w` 在 1e200 量级（超出 float32 的范围），eager 调用 `block`，用你的算子自己的内核",
                       case=case_of(x, w)))


def test_result_comes_from_the_op(entry, starter):
    """block's result comes from the ext op: with the op replaced by another function, it changes as the original does
    zh: block 的结果来自 ext 算子：把算子换成另一个函数后，结果的变化与原函数一致
    """
    fn = entry.compile(fullgraph=True, dynamic=True)
    for x_shape, w_shape in SHAPES[:2]:
        x, w = torch.randn(x_shape), torch.randn(w_shape)
        for by in (None, waved()):
            assert_result_flows_through(KERNEL, fn, starter.block, x, w, case=case_of(x, w), by=by)


def waved():
    """The vendor kernel plus a wave of its own input, of drawn frequency, phase and size: the default replacement
    moves each element by a drawn multiple of the tolerance whatever the op's input, so a graph that calls the op on
    zeros and carries the move over to an inline gelu imitates it (`wrong/op_on_zeros.py`); this one differs with
    the op's input, which must be `x @ w`."""
    a, b, e = 1 + 4 * float(torch.rand(())), 6.28 * float(torch.rand(())), 0.01 + 0.09 * float(torch.rand(()))
    return lambda x: vendor_kernel(x) + e * torch.sin(a * x + b)
