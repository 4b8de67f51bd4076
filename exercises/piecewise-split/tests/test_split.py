"""Hidden tests for piecewise-split: the learner splits the grader's Dynamo graph around practice::attention.

The grader captures its own model's graph here and sends it (as IR, without inputs) to the runner, where
`split_graph` runs; the split graph and its submodules come back as IR, are rebuilt here from the allowlist
(aten, torch functions, and practice::attention from public.py) and run on the grader's inputs.
"""

import operator

import pytest
import torch
from _attn_model import is_attention, make

from judge.checks import WrongAnswer, assert_same, compile_one_graph, describe_tensor
from judge.checks.fx_passes import apply_pass, graph_diagnostic, target_name
from judge.report import GraphDiagnostic

PACKET_HINT = (" Did your split match the node? Dynamo records the call as torch.ops.practice.attention, the "
               "OpOverloadPacket, not torch.ops.practice.attention.default.")


def split(entry, layers, dtype=torch.float32, batch=2, seq=6, rename=False):
    """(model, x, the Dynamo graph's real inputs, the split module) for a model with `layers` layers.

    With `rename`, the graph's operation nodes get neutral names first (op0, op1, ...), and the pooling head's
    scaled_dot_product_attention is named attention_pool: what a node is, is its target, never its name."""
    model = make(layers, dtype)
    x = torch.randn(batch, seq, 16, dtype=dtype)
    captured = compile_one_graph(model, x, what="the grader's model")
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
    result = apply_pass(entry, graph, name="split_graph")   # runs in the runner; rebuilt here
    return model, x, captured.example_inputs[0], result


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
    return GraphDiagnostic(title="pieces (submodules) in call order", code="\n".join(lines) or "(none)")


def test_attention_alone(entry):
    """Every practice.attention call sits in a piece of its own"""
    layers = 2
    _, _, _, gm = split(entry, layers)
    found = pieces(gm)
    if not found:
        raise WrongAnswer("split_graph returned the graph unsplit: the top-level graph calls no submodules "
                          "(pieces)." + PACKET_HINT, [graph_diagnostic(gm)])
    top_level = [n.name for n in gm.graph.nodes if is_attention(n)]
    if top_level:
        raise WrongAnswer(f"practice.attention is called in the top-level graph ({', '.join(top_level)}), outside "
                          "every piece; put each call in a submodule of its own.", [graph_diagnostic(gm)])
    holding = [(name, ops) for name, ops in found if any(is_attention(n) for n in ops)]
    for name, ops in holding:
        if len(ops) != 1:
            others = [n for n in ops if not is_attention(n)]
            message = (f"piece {name} holds practice.attention together with {len(others)} other operations "
                       f"({op_names(others)}); each attention call must be alone in its piece.")
            lone = [op_names(o) for _, o in found if len(o) == 1 and not is_attention(o[0])]
            if lone:
                message += f" Your split isolated {', '.join(lone)} instead, which is not the grader's op."
            raise WrongAnswer(message + (PACKET_HINT if len(found) == 1 else ""), [layout(gm)])
    if len(holding) != layers:
        raise WrongAnswer(f"{len(holding)} pieces hold practice.attention, but the model calls it {layers} times.",
                          [layout(gm)])


def test_piece_count(entry):
    """A model with L layers splits into exactly 2L+1 pieces (L = 1, 2, 4)"""
    for layers in (1, 2, 4):
        _, _, _, gm = split(entry, layers)
        found = pieces(gm)
        if len(found) != 2 * layers + 1:
            extra = [name for name, ops in found if len(ops) == 1 and not is_attention(ops[0])]
            message = (f"a model with L = {layers} layers should split into 2L+1 = {2 * layers + 1} pieces (the "
                       f"attention calls and the compiled pieces between them); yours has {len(found)}.")
            if extra:
                message += (f" Pieces {', '.join(extra)} hold a single operation that is not practice.attention: "
                            "split only around the grader's op (other attention-like calls, such as "
                            "scaled_dot_product_attention, stay in the compiled pieces).")
            raise WrongAnswer(message, [layout(gm)])


def test_top_level_only_calls_pieces(entry):
    """The top-level graph only calls the pieces (every operation lives inside one)"""
    _, _, _, gm = split(entry, 2)
    loose = [n.name for n in gm.graph.nodes if n.op in ("call_function", "call_method")
             and n.target is not operator.getitem]
    if loose:
        raise WrongAnswer(f"the top-level graph computes {', '.join(loose[:5])} itself; every operation should "
                          "be inside a piece, so that each piece can be compiled.", [graph_diagnostic(gm)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_same_results(entry, dtype):
    """The split module computes the same results as the model (2 and 3 layers)"""
    for layers in (2, 3):
        model, x, args, gm = split(entry, layers, dtype)
        with torch.no_grad():
            assert_same(tuple(gm(*args)), (model(x),), case=f"{layers} layers, {describe_tensor('x', x)}")


def test_pieces_compile(entry):
    """Compiling every piece except the attention ones (piecewise compilation) gives the same results"""
    model, x, args, gm = split(entry, 3, batch=3, seq=5)
    for name, ops in pieces(gm):
        if not any(is_attention(n) for n in ops):
            setattr(gm, name, torch.compile(gm.get_submodule(name), backend="aot_eager", fullgraph=True))
    with torch.no_grad():
        assert_same(tuple(gm(*args)), (model(x),), case=f"3 layers, pieces compiled, {describe_tensor('x', x)}")


def test_split_by_target(entry):
    """The split follows each node's target, not its name: the same graph with renamed nodes splits the same way"""
    for layers in (1, 2):
        model, x, args, gm = split(entry, layers, rename=True)
        found = pieces(gm)
        holding = [name for name, ops in found if len(ops) == 1 and is_attention(ops[0])]
        if len(found) != 2 * layers + 1 or len(holding) != layers:
            raise WrongAnswer(f"the grader's graph with its nodes renamed (op0, op1, ...; the pooling head's SDPA "
                              f"named attention_pool) should split into {2 * layers + 1} pieces, {layers} of them a "
                              f"lone practice.attention; yours has {len(found)} pieces, {len(holding)} of them a "
                              "lone practice.attention. Node names are labels Dynamo picks (they change with the "
                              "code and with the graph): match node.target.", [layout(gm)])
        with torch.no_grad():
            assert_same(tuple(gm(*args)), (model(x),), case=f"{layers} layers, nodes renamed")
