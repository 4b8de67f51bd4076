"""Hidden tests for piecewise-split: the learner splits the grader's Dynamo graph around practice::attention.

The grader captures its own model's graph here and sends it (as IR, without inputs) to the runner, where
`split_graph` runs; the split graph and its submodules come back as IR, are rebuilt here from the allowlist
(aten, torch functions, and practice::attention from public.py) and run on the grader's inputs.
"""

import operator

import pytest
import torch
import torch.nn.functional as F
from _attn_model import PUBLIC, is_attention, make

from judge.checks import (
    Provided,
    WrongAnswer,
    assert_result_flows_through,
    assert_same_result,
    compile_one_graph,
    describe_tensor,
)
from judge.checks.fx_passes import apply_pass, graph_diagnostic, target_name
from judge.reports.i18n import T
from judge.reports.report import GraphDiagnostic

PACKET_HINT = T(" Did your split match the node? Dynamo records the call as `torch.ops.practice.attention`, the "
                "OpOverloadPacket, not `torch.ops.practice.attention.default`.",
                zh="你的切分匹配到这个节点了吗？Dynamo 图里记录的是 OpOverloadPacket "
                   "`torch.ops.practice.attention`，不是 `torch.ops.practice.attention.default`。")
ATTENTION = T.same("`practice.attention`")
# What practice::attention runs here, in the model and in the split graph: replaced by another function of q, k, v
# in `test_result_comes_from_attention`, on both sides.
KERNEL = Provided(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), name=ATTENTION)
PUBLIC.attention.register_kernel("cpu")(lambda q, k, v: KERNEL(q, k, v))


def split(entry, layers, dtype=torch.float32, batch=2, seq=6, rename=False):
    """(model, x, the Dynamo graph's real inputs, the split module) for a model with `layers` layers.

    With `rename`, the graph's operation nodes get neutral names first (op0, op1, ...), and the pooling head's
    scaled_dot_product_attention is named attention_pool: what a node is, is its target, never its name."""
    model = make(layers, dtype)
    x = torch.randn(batch, seq, 16, dtype=dtype)
    captured = compile_one_graph(model, x, what=T("the grader's model", zh="评测用的模型"))
    torch._dynamo.reset()
    graph = captured.graphs[0]
    if rename:
        ops = [n for n in graph.graph.nodes if n.op in ("call_function", "call_method", "call_module")]
        for i, node in enumerate(ops):
            node._rename(f"tmp_{i}")
        for i, node in enumerate(ops):
            sdpa = node.target is torch._C._nn.scaled_dot_product_attention
            node._rename("attention_pool" if sdpa else f"op{i}")
        graph.recompile()
    result = apply_pass(entry, graph, name=T.same("`split_graph`"))   # runs in the runner; rebuilt here
    return model, x, captured.example_inputs[0], result


def pieces_run(gm):
    """The split module called on the Dynamo graph's inputs (rebuilt here; it runs sealed, on copies)."""
    return lambda *args: tuple(gm(*args))


def model_run(model, x):
    """The grader's model on x, whatever graph inputs the helpers hand it (they run it first)."""
    return lambda *args: (model(x),)


def pieces(gm: torch.fx.GraphModule) -> list[tuple[str, list[torch.fx.Node]]]:
    """(name, operations) of every submodule the top-level graph calls, in call order."""
    found = []
    for node in gm.graph.nodes:
        if node.op == "call_module":
            sub = gm.get_submodule(node.target)
            ops = [n for n in sub.graph.nodes if n.op not in ("placeholder", "output", "get_attr")] \
                if isinstance(sub, torch.fx.GraphModule) else [node]
            found.append((node.target, ops))
    return found


def op_names(ops) -> str:
    names = [target_name(n.target).split(".")[-1] if not isinstance(n.target, str) else n.target for n in ops]
    return ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")


def layout(gm) -> GraphDiagnostic:
    lines = [f"{name}: {op_names(ops)}" for name, ops in pieces(gm)]
    return GraphDiagnostic(title=T("pieces (submodules) in call order", zh="按调用顺序排列的各段（子模块）"),
                           code="\n".join(lines) or "(none)")


def test_attention_alone(entry):
    """Every practice.attention call sits in a piece of its own
    zh: 每次 practice.attention 调用都单独成一段
    """
    layers = 2
    _, _, _, gm = split(entry, layers)
    found = pieces(gm)
    if not found:
        raise WrongAnswer(T.join([T("`split_graph` returned the graph unsplit: the top-level graph calls no "
                                    "submodules (pieces).",
                                    zh="`split_graph` 返回的图没有切开：顶层图没有调用任何子模块（段）。"),
                                  PACKET_HINT], sep=""), [graph_diagnostic(gm)])
    top_level = [n.name for n in gm.graph.nodes if is_attention(n)]
    if top_level:
        raise WrongAnswer(T("`practice.attention` is called in the top-level graph ({nodes}), outside every "
                            "piece; put each call in a submodule of its own.",
                            zh="`practice.attention` 在顶层图里被调用（{nodes}），不在任何一段里；请把每次调用"
                               "放进它自己的子模块。", nodes=f"`{', '.join(top_level)}`"), [graph_diagnostic(gm)])
    holding = [(name, ops) for name, ops in found if any(is_attention(n) for n in ops)]
    for name, ops in holding:
        if len(ops) != 1:
            others = [n for n in ops if not is_attention(n)]
            parts = [T("piece `{name}` holds `practice.attention` together with {n} other operations ({ops}); "
                       "each attention call must be alone in its piece.",
                       zh="段 `{name}` 里除了 `practice.attention` 还有 {n} 个别的运算（{ops}）；每次注意力调用"
                          "都必须单独成一段。", name=name, n=len(others), ops=f"`{op_names(others)}`")]
            lone = [op_names(o) for _, o in found if len(o) == 1 and not is_attention(o[0])]
            if lone:
                parts.append(T(" Your split isolated {lone} instead, which is not the grader's op.",
                               zh="你的切分单独切出来的是 {lone}，它不是评测用的算子。",
                               lone=f"`{', '.join(lone)}`"))
            if len(found) == 1:
                parts.append(PACKET_HINT)
            raise WrongAnswer(T.join(parts, sep=""), [layout(gm)])
    if len(holding) != layers:
        raise WrongAnswer(T("{n} pieces hold `practice.attention`, but the model calls it {layers} times.",
                            zh="有 {n} 段含有 `practice.attention`，但模型调用了它 {layers} 次。",
                            n=len(holding), layers=layers), [layout(gm)])


def test_piece_count(entry):
    """A model with L layers splits into exactly 2L+1 pieces (L = 1, 2, 4)
    zh: L 层的模型恰好切成 2L+1 段（L = 1、2、4）
    """
    for layers in (1, 2, 4):
        _, _, _, gm = split(entry, layers)
        found = pieces(gm)
        if len(found) != 2 * layers + 1:
            extra = [name for name, ops in found if len(ops) == 1 and not is_attention(ops[0])]
            parts = [T("a model with L = {layers} layers should split into 2L+1 = {want} pieces (the attention "
                       "calls and the compiled pieces between them); yours has {got}.",
                       zh="L = {layers} 层的模型应当切成 2L+1 = {want} 段（各次注意力调用，以及它们之间要编译的"
                          "各段）；你切出了 {got} 段。", layers=layers, want=2 * layers + 1, got=len(found))]
            if extra:
                parts.append(T(" Pieces {extra} hold a single operation that is not `practice.attention`: split "
                               "only around the grader's op (other attention-like calls, such as "
                               "`scaled_dot_product_attention`, stay in the compiled pieces).",
                               zh="段 {extra} 只有一个运算，却不是 `practice.attention`：只在评测用的算子处切分"
                                  "（别的类似注意力的调用，比如 `scaled_dot_product_attention`，留在要编译的段里）。",
                               extra=f"`{', '.join(extra)}`"))
            raise WrongAnswer(T.join(parts, sep=""), [layout(gm)])


def test_top_level_only_calls_pieces(entry):
    """The top-level graph only calls the pieces (every operation lives inside one)
    zh: 顶层图只调用各段（每个运算都在某一段里）
    """
    _, _, _, gm = split(entry, 2)
    loose = [n.name for n in gm.graph.nodes if n.op in ("call_function", "call_method")
             and n.target is not operator.getitem]
    if loose:
        raise WrongAnswer(T("the top-level graph computes {nodes} itself; every operation should be inside a "
                            "piece, so that each piece can be compiled.",
                            zh="顶层图自己计算了 {nodes}；每个运算都应当在某一段里，这样每一段才能各自编译。",
                            nodes=f"`{', '.join(loose[:5])}`"), [graph_diagnostic(gm)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_same_results(entry, dtype):
    """The split module computes the same results as the model (2 and 3 layers)
    zh: 切分后的模块与原模型结果相同（2 层和 3 层）
    """
    for layers in (2, 3):
        model, x, args, gm = split(entry, layers, dtype)
        with torch.no_grad():
            assert_same_result(pieces_run(gm), model_run(model, x), *args,
                               case=T("{layers} layers, {x}", zh="{layers} 层，{x}", layers=layers,
                                      x=describe_tensor("x", x)))


def test_pieces_compile(entry):
    """Compiling every piece except the attention ones (piecewise compilation) gives the same results
    zh: 除注意力段外每段各自编译（分段编译）后，结果仍然相同
    """
    model, x, args, gm = split(entry, 3, batch=3, seq=5)
    for name, ops in pieces(gm):
        if not any(is_attention(n) for n in ops):
            setattr(gm, name, torch.compile(gm.get_submodule(name), backend="aot_eager", fullgraph=True))
    with torch.no_grad():
        assert_same_result(pieces_run(gm), model_run(model, x), *args,
                           case=T("3 layers, pieces compiled, {x}", zh="3 层，各段分别编译，{x}",
                                  x=describe_tensor("x", x)))


def test_split_by_target(entry):
    """The split follows each node's target, not its name: the same graph with renamed nodes splits the same way
    zh: 切分依据节点的 target 而不是名字：节点改名后的同一张图切法不变
    """
    for layers in (1, 2):
        model, x, args, gm = split(entry, layers, rename=True)
        found = pieces(gm)
        holding = [name for name, ops in found if len(ops) == 1 and is_attention(ops[0])]
        if len(found) != 2 * layers + 1 or len(holding) != layers:
            raise WrongAnswer(T("the grader's graph with its nodes renamed (`op0`, `op1`, ...; the pooling head's "
                                "SDPA named `attention_pool`) should split into {want} pieces, {layers} of them a "
                                "lone `practice.attention`; yours has {got} pieces, {alone} of them a lone "
                                "`practice.attention`. Node names are labels Dynamo picks (they change with the "
                                "code and with the graph): match `node.target`.",
                                zh="把评测图的节点改名之后（`op0`、`op1`……；池化头的 SDPA 改名为 "
                                   "`attention_pool`），应当切成 {want} 段，其中 {layers} 段是单独的 "
                                   "`practice.attention`；你切出了 {got} 段，其中 {alone} 段是单独的 "
                                   "`practice.attention`。节点名只是 Dynamo 起的标签（代码和图一变它就变）："
                                   "请匹配 `node.target`。",
                                want=2 * layers + 1, layers=layers, got=len(found), alone=len(holding)),
                              [layout(gm)])
        with torch.no_grad():
            assert_same_result(pieces_run(gm), model_run(model, x), *args,
                               case=T("{layers} layers, nodes renamed", zh="{layers} 层，节点已改名", layers=layers))


def test_result_comes_from_attention(entry):
    """The split module's result comes from practice.attention: with the op replaced, it changes as the model's does
    zh: 切分后模块的结果来自 practice.attention：把这个算子换掉后，结果的变化与原模型一致
    """
    for layers in (2,):
        model, x, args, gm = split(entry, layers)
        with torch.no_grad():
            assert_result_flows_through(KERNEL, pieces_run(gm), model_run(model, x), *args,
                                        case=T("{layers} layers, {x}", zh="{layers} 层，{x}", layers=layers,
                                               x=describe_tensor("x", x)))
