"""Hidden tests for fx-pass-silu: the learner's pass runs on the post-AOTAutograd ATen graph of the grader's models.

The grader builds each ATen graph here and sends it (as IR, without its inputs) to the runner, where
`silu_pass` edits it; the graph it returns is rebuilt here from the allowlist, counted and run on the
grader's inputs. The runner is asked what running its own returned module does only to explain a failure
(a forgotten gm.recompile()).
"""

import torch
from _silu_models import (
    Block,
    Gating,
    NotProducts,
    OtherMuls,
    ResidualSilu,
    SharedByTwoMuls,
    SharedSigmoid,
    SigmoidApart,
    SigmoidOfSigmoid,
    SigmoidTimesX,
    SiluOnInput,
    SiluReturned,
    XTimesSigmoid,
    make,
)
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from judge import remote
from judge.checks import WrongAnswer, assert_same, assert_same_result, describe_tensor, expected_first
from judge.checks.fx_passes import (
    apply_pass,
    apply_remote_pass,
    aten_graph,
    dead_nodes,
    executed_ops,
    graph_diagnostic,
    op_counts,
)
from judge.checks.trust import rests_on_learner_process
from judge.reports.i18n import T

SILU, SIGMOID, MUL = "aten.silu.default", "aten.sigmoid.default", "aten.mul.Tensor"
WATCHED = (SILU, SIGMOID, MUL)
PASS = T.same("`silu_pass(gm)`")
BLOCK = T("the Block model", zh="Block 模型")


def rewritten(entry, cls, dtype=torch.float32):
    """(model, graph before, graph after the learner's pass, the graph's real inputs, x)."""
    model = make(cls, dtype)
    x = torch.randn(4, 16, dtype=dtype)
    gm, args = aten_graph(model, x)
    before = op_counts(gm)
    after = apply_pass(entry, gm, name=PASS)
    return model, before, after, args, x


def describe(counts) -> T:
    """'2 `silu`, 0 `sigmoid`, 3 `mul`' in both languages."""
    parts = [(counts.get(op, 0), op.split(".")[1]) for op in WATCHED]
    return T("{en_text}", zh="{zh_text}", en_text=", ".join(f"{n} `{op}`" for n, op in parts),
             zh_text="、".join(f"{n} 个 `{op}`" for n, op in parts))


def expect_counts(after, expected: dict, pattern: T) -> None:
    """Fail with the graph shown unless nothing is left unused and the watched ops have the expected counts."""
    dead = dead_nodes(after)
    if dead:
        raise WrongAnswer(T("{pattern}: your pass left {dead} in the graph with no users; erase the nodes you "
                            "replace (`graph.erase_node`) or call `graph.eliminate_dead_code()`",
                            zh="{pattern}：你的 pass 在图里留下了没有用户的 {dead}；请删掉被替换的节点"
                               "（`graph.erase_node`），或者调用 `graph.eliminate_dead_code()`",
                            pattern=pattern, dead=f"`{', '.join(dead)}`"),
                          [graph_diagnostic(after, highlight=dead)])
    counts = op_counts(after)
    got = {op: counts.get(op, 0) for op in WATCHED}
    if got == expected:
        return
    others = sorted(t for t in counts if "silu" in t and t != SILU)
    message = T("{pattern}: after your pass the graph has {got}; expected {expected}",
                zh="{pattern}：你的 pass 改写之后，图里有 {got}；应当是 {expected}",
                pattern=pattern, got=describe(got), expected=describe(expected))
    if others:
        message = T.join([message, T(". It calls {others}: in an ATen graph insert `torch.ops.aten.silu.default` "
                                     "(an OpOverload, like every other node there)",
                                     zh="。它调用了 {others}：ATen 图里应当插入 `torch.ops.aten.silu.default`"
                                        "（和图里其他节点一样，是一个 OpOverload）",
                                     others=f"`{', '.join(others)}`")], sep="")
    raise WrongAnswer(message, [graph_diagnostic(after)])


def expect_same(after, args, model, x, pattern: T) -> None:
    """The rewritten graph on the model's graph inputs equals the model on x (computed first)."""
    assert_same_result(lambda *a: after(*a)[0], lambda *a: model(x).detach(), *args,
                       case=T("{pattern}, {x}", zh="{pattern}，{x}", pattern=pattern, x=describe_tensor("x", x)))


def code(text: str) -> T:
    """A model's pattern, as code: the same in both languages."""
    return T.same(f"`{text}`")


def test_x_times_sigmoid(entry):
    """mul(x, sigmoid(x)) becomes one aten.silu(x)
    zh: mul(x, sigmoid(x)) 变成一个 aten.silu(x)
    """
    model, _, after, args, x = rewritten(entry, XTimesSigmoid)
    expect_counts(after, {SILU: 1, SIGMOID: 0, MUL: 0}, code("h * torch.sigmoid(h)"))
    expect_same(after, args, model, x, code("h * torch.sigmoid(h)"))


def test_sigmoid_times_x(entry):
    """mul(sigmoid(x), x), the other operand order, becomes aten.silu(x) too
    zh: 操作数顺序相反的 mul(sigmoid(x), x) 也变成 aten.silu(x)
    """
    model, _, after, args, x = rewritten(entry, SigmoidTimesX)
    expect_counts(after, {SILU: 1, SIGMOID: 0, MUL: 0}, code("torch.sigmoid(h) * h"))
    expect_same(after, args, model, x, code("torch.sigmoid(h) * h"))


def test_gating_product_kept(entry):
    """A gate a * sigmoid(b) with a different tensor b is left alone
    zh: b 是另一个张量时，门控 a * sigmoid(b) 保持不变
    """
    model, _, after, args, x = rewritten(entry, Gating)
    expect_counts(after, {SILU: 0, SIGMOID: 1, MUL: 1}, code("a * torch.sigmoid(b)"))
    expect_same(after, args, model, x, code("a * torch.sigmoid(b)"))


def test_shared_sigmoid_kept(entry):
    """x * sigmoid(x) is left alone when the sigmoid has another user (the rewrite would save nothing)
    zh: sigmoid 还有别的用户时，x * sigmoid(x) 保持不变（改写省不下任何计算）
    """
    model, _, after, args, x = rewritten(entry, SharedSigmoid)
    expect_counts(after, {SILU: 0, SIGMOID: 1, MUL: 1}, code("s = torch.sigmoid(h); h * s + s"))
    expect_same(after, args, model, x, code("s = torch.sigmoid(h); h * s + s"))


def test_other_muls_untouched(entry):
    """Products with Python numbers and other products are left alone
    zh: 与 Python 数的乘积和其他乘积保持不变
    """
    model, before, after, args, x = rewritten(entry, OtherMuls)
    expect_counts(after, {op: before.get(op, 0) for op in WATCHED}, code("sigmoid(h) * 2.0 + h * 0.5 + h * h"))
    expect_same(after, args, model, x, code("sigmoid(h) * 2.0 + h * 0.5 + h * h"))


@rests_on_learner_process(T(
    "which operations the module your pass returned executed when run in your process: whether `gm.forward` was "
    "regenerated (`gm.recompile()`) is a property of that Python object, not of its graph (the graph, run here, "
    "must hold the rewrite)",
    zh="你的 pass 返回的模块在你的进程里运行时执行了哪些运算：`gm.forward` 是否重新生成（`gm.recompile()`）"
       "是那个 Python 对象的性质，不是它的图的性质（图在本方运行，必须包含改写）"))
def test_rewritten_graph_runs(entry):
    """The module your pass returns runs the rewritten graph (2 silu, no stale code)
    zh: 你的 pass 返回的模块运行的是改写后的图（2 个 silu，没有过期的代码）
    """
    model = make(Block)
    x = torch.randn(4, 16)
    gm, args = aten_graph(model, x)
    after, returned = apply_remote_pass(entry, gm, name=PASS)
    expected = {SILU: 2, SIGMOID: 2, MUL: 3}
    in_graph = {op: op_counts(after).get(op, 0) for op in WATCHED}
    if in_graph != expected:
        raise WrongAnswer(T("{model}: after your pass the graph has {got}; expected {expected}",
                            zh="{model}：你的 pass 改写之后，图里有 {got}；应当是 {expected}",
                            model=BLOCK, got=describe(in_graph), expected=describe(expected)),
                          [graph_diagnostic(after)])
    # The module stays in the runner: run it there (on other values of the same shapes) and count what ran.
    # This can only fail the check; the numbers below come from the returned graph, run here.
    ran = remote.call(remote.public("executed_ops"), returned, *remote.example_like(tuple(args)),
                      what=T("the module `silu_pass` returned", zh="`silu_pass` 返回的模块"))
    if not isinstance(ran, dict):
        raise remote.Protocol("malformed operation counts")
    got = {op: ran.get(op, 0) for op in WATCHED}
    if got != expected:
        raise WrongAnswer(T("running the module your pass returned executed {got}, although its graph has "
                            "{in_graph}: `gm.forward` still runs the old code. After editing `gm.graph`, call "
                            "`gm.recompile()` so that `gm.forward` is regenerated from it.",
                            zh="运行你的 pass 返回的模块，实际执行了 {got}，而它的图里有 {in_graph}："
                               "`gm.forward` 跑的还是旧代码。改完 `gm.graph` 之后要调用 `gm.recompile()`，"
                               "让 `gm.forward` 按新图重新生成。",
                            got=describe(got), in_graph=describe(in_graph)),
                          [graph_diagnostic(after)])
    expect_same(after, args, model, x, BLOCK)


def test_in_compile_pipeline(entry):
    """As a pass inside torch.compile (aot_autograd forward compiler), the results equal eager, float32 and float64
    zh: 作为 torch.compile 里的 pass（aot_autograd 的前向编译器），float32 和 float64 的结果都与 eager 相同
    """
    ran = []

    def forward_compiler(gm, example_inputs):
        rewritten_gm = apply_pass(entry, gm, name=PASS)   # the pass runs in the runner, the graph here

        def run(*args):  # count the ops the compiled model really runs
            output, counts = executed_ops(rewritten_gm, *args)
            ran.append(counts)
            return output

        return make_boxed_func(run)

    for dtype in (torch.float32, torch.float64):
        torch._dynamo.reset()
        model = make(Block, dtype)
        compiled = torch.compile(model, backend=aot_autograd(fw_compiler=forward_compiler), fullgraph=True)
        for rows in (4, 1):
            x = torch.randn(rows, 16, dtype=dtype)
            with torch.no_grad():
                expected, output = expected_first(lambda x: model(x).detach(), compiled, x)  # noqa: B023 - run now
            silus = ran[-1].get(SILU, 0) if ran else 0
            if silus != 2:
                raise WrongAnswer(T("inside `torch.compile` {model} ran {n} `aten.silu`, expected 2",
                                    zh="在 `torch.compile` 里，{model}运行了 {n} 次 `aten.silu`，应当是 2 次",
                                    model=BLOCK, n=silus))
            assert_same(output, expected,
                        case=T("{model}, {x}", zh="{model}，{x}", model=BLOCK, x=describe_tensor("x", x)))


def test_x_with_other_users(entry):
    """h * sigmoid(h) becomes aten.silu(h) also when h has other users (a residual h * sigmoid(h) + h)
    zh: h 还有别的用户时（残差 h * sigmoid(h) + h），h * sigmoid(h) 也变成 aten.silu(h)
    """
    model, _, after, args, x = rewritten(entry, ResidualSilu)
    expect_counts(after, {SILU: 1, SIGMOID: 0, MUL: 0}, code("h * torch.sigmoid(h) + h"))
    expect_same(after, args, model, x, code("h * torch.sigmoid(h) + h"))


def renamed(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """gm with neutral names (op0, op1, ...) on its operation nodes: what a node is, is its target, never its name."""
    ops = [n for n in gm.graph.nodes if n.op == "call_function"]
    for i, node in enumerate(ops):
        node._rename(f"tmp_{i}")
    for i, node in enumerate(ops):
        node._rename(f"op{i}")
    gm.recompile()
    return gm


def test_match_by_target(entry):
    """The pass matches each node's target, not its name: the Block model's graph with renamed nodes is rewritten too
    zh: pass 依据节点的 target 而不是名字来匹配：节点改名后的 Block 模型图照样被改写
    """
    model = make(Block)
    x = torch.randn(4, 16)
    gm, args = aten_graph(model, x)
    after = apply_pass(entry, renamed(gm), name=PASS)
    pattern = T("the Block model with renamed nodes", zh="节点改名后的 Block 模型")
    expected = {SILU: 2, SIGMOID: 2, MUL: 3}
    got = {op: op_counts(after).get(op, 0) for op in WATCHED}
    if got != expected:
        raise WrongAnswer(T("the Block model's graph with its nodes renamed (`op0`, `op1`, ...) has {got} after your "
                            "pass; expected {expected}. Node names are labels (they change with the code and with "
                            "earlier passes): match `node.target`, e.g. `torch.ops.aten.sigmoid.default`.",
                            zh="把 Block 模型图的节点改名之后（`op0`、`op1`……），经过你的 pass，图里有 {got}；应当是 "
                               "{expected}。节点名只是标签（代码一变、前面的 pass 一改，它就变）：请匹配 "
                               "`node.target`，例如 `torch.ops.aten.sigmoid.default`。",
                            got=describe(got), expected=describe(expected)), [graph_diagnostic(after)])
    expect_counts(after, expected, pattern)
    expect_same(after, args, model, x, pattern)


# model -> (the pattern as code, the watched counts expected after the pass; None: as before it)
MORE_FORMS = (
    (SiluOnInput, "x * torch.sigmoid(x)  # x: the graph's input", {SILU: 1, SIGMOID: 0, MUL: 0}),
    (SiluReturned, "return h * torch.sigmoid(h)  # the graph's output", {SILU: 1, SIGMOID: 0, MUL: 0}),
    (SigmoidApart, "s = torch.sigmoid(h); g = torch.cos(h); h * s + g", {SILU: 1, SIGMOID: 0, MUL: 0}),
    (SigmoidOfSigmoid, "y = torch.sigmoid(...); y * torch.sigmoid(y)", {SILU: 1, SIGMOID: 1, MUL: 0}),
    (NotProducts, "h + sigmoid(h), h / sigmoid(h), h * hardsigmoid(h)", None),
    (SharedByTwoMuls, "s = torch.sigmoid(h); h * s + s * h", None),
)


def test_more_forms_of_the_pattern(entry):
    """The pattern on the graph's input, as its output, with other nodes between the sigmoid and its mul, and on a
    sigmoid's output is rewritten; sums, quotients, hard sigmoids and a sigmoid shared by two products are not
    zh: 模式出现在图的输入上、作为图的输出、sigmoid 和它的 mul 之间隔着别的节点、作用在一个 sigmoid 的输出上时都要改写；
    加法、除法、hardsigmoid 以及被两个乘积共用的 sigmoid 都不改写
    """
    for cls, text, expected in MORE_FORMS:
        model, before, after, args, x = rewritten(entry, cls)
        expect_counts(after, expected or {op: before.get(op, 0) for op in WATCHED}, code(text))
        expect_same(after, args, model, x, code(text))

