"""judge.checks.fx_passes: the post-AOTAutograd ATen graph, node counts, dead nodes, the ops that really run."""

import pytest
import torch

from judge.checks import WrongAnswer
from judge.checks.fx_passes import apply_pass, aten_graph, dead_nodes, executed_ops, op_counts, target_name

aten = torch.ops.aten


class Gelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        return h * torch.sigmoid(h) + h * 0.5


@pytest.fixture
def graph():
    torch._dynamo.reset()
    model = Gelu().eval()
    x = torch.randn(3, 4)
    gm, args = aten_graph(model, x)
    return model, x, gm, args


def test_aten_graph_holds_aten_overloads_and_real_inputs(graph):
    model, x, gm, args = graph
    counts = op_counts(gm)
    assert counts["aten.sigmoid.default"] == 1 and counts["aten.mul.Tensor"] == 2
    assert all(isinstance(a, torch.Tensor) and not isinstance(a, torch._subclasses.FakeTensor) for a in args)
    torch.testing.assert_close(gm(*args)[0], model(x).detach())


def test_target_names():
    assert target_name(aten.mul.Tensor) == "aten.mul.Tensor"
    assert target_name(torch.nn.functional.silu) == "torch.nn.functional.silu"
    assert target_name("forward") == "forward"


def erase_mul_keep_sigmoid(gm):
    for node in list(gm.graph.nodes):
        if node.target is aten.mul.Tensor and node.args[1] is not None and isinstance(node.args[1], torch.fx.Node):
            with gm.graph.inserting_before(node):
                new = gm.graph.call_function(aten.silu.default, (node.args[0],))
            node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
    return gm


def test_dead_nodes_and_stale_code_are_visible(graph):
    model, x, gm, args = graph
    out = apply_pass(erase_mul_keep_sigmoid, gm)
    assert dead_nodes(out) == ["sigmoid"]
    _, ran = executed_ops(out, *args)          # no recompile(): the old code still runs
    assert ran["aten.silu.default"] == 0 and ran["aten.sigmoid.default"] == 1
    out.recompile()
    _, ran = executed_ops(out, *args)
    assert ran["aten.silu.default"] == 1


def test_a_pass_must_return_a_graph_module(graph):
    _, _, gm, _ = graph
    with pytest.raises(WrongAnswer, match="returned `NoneType`"):
        apply_pass(lambda g: None, gm)


def test_an_invalid_graph_is_named(graph):
    _, _, gm, _ = graph

    def use_before_def(g):
        first = next(n for n in g.graph.nodes if n.op == "call_function")
        last = [n for n in g.graph.nodes if n.op == "call_function"][-1]
        first.args = (last,) + tuple(first.args[1:])
        return g

    with pytest.raises(WrongAnswer, match="invalid graph"):
        apply_pass(use_before_def, gm)


def test_the_learners_exception_propagates(graph):
    _, _, gm, _ = graph
    with pytest.raises(ZeroDivisionError):
        apply_pass(lambda g: 1 / 0, gm)
