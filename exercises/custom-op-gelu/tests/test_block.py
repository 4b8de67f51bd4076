"""Hidden tests for custom-op-gelu: one graph with an ext.* op, opcheck, same numbers under dynamic shapes."""

import torch
import torch.fx

from judge.checks import assert_same, compile_one_graph, describe_tensor
from judge.checks.custom_ops import assert_calls_custom_op, assert_opcheck

OPCHECK_CASES = [
    ("x [4, 8] float32", lambda: torch.randn(4, 8)),
    ("x [3, 5] float64", lambda: torch.randn(3, 5, dtype=torch.float64)),
    ("x [0, 8] float32 (empty)", lambda: torch.randn(0, 8)),
    ("x [2, 3, 4] float32", lambda: torch.randn(2, 3, 4)),
]
SHAPES = [((4, 8), (8, 8)), ((1, 3), (3, 5)), ((7, 16), (16, 2)), ((5, 4), (4, 6))]


def ext_ops(entry):
    captured = compile_one_graph(entry, torch.randn(4, 8), torch.randn(8, 8))
    return assert_calls_custom_op(captured.graphs[0], "ext", what="the graph of block")


def with_sample(node: torch.fx.Node, sample: torch.Tensor):
    """The node's arguments, with every graph value replaced by `sample`."""
    args = tuple(sample if isinstance(a, torch.fx.Node) else a for a in node.args)
    kwargs = {k: sample if isinstance(v, torch.fx.Node) else v for k, v in node.kwargs.items()}
    return args, kwargs


def test_one_graph_with_ext_op(entry):
    """torch.compile(block, fullgraph=True) captures one graph that calls an ext.* operator"""
    ext_ops(entry)


def test_opcheck(entry):
    """torch.library.opcheck passes for the ext op on float32, float64, an empty and a 3-d input"""
    for node, op in ext_ops(entry):
        for case, make in OPCHECK_CASES:
            args, kwargs = with_sample(node, make())
            assert_opcheck(op, args, kwargs=kwargs, case=case)


def test_same_numbers_dynamic(entry, starter):
    """With dynamic=True the compiled block equals the original for several shapes"""
    fn = torch.compile(entry, fullgraph=True, dynamic=True, backend="aot_eager")
    for x_shape, w_shape in SHAPES:
        x, w = torch.randn(x_shape), torch.randn(w_shape)
        assert_same(fn(x, w), starter.block(x, w), case=f"{describe_tensor('x', x)}, {describe_tensor('w', w)}")


def test_float64_and_empty(entry, starter):
    """float64 inputs give float64 results, and an empty batch gives an empty result"""
    fn = torch.compile(entry, fullgraph=True, dynamic=True, backend="aot_eager")
    for x, w in [(torch.randn(6, 4, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64)),
                 (torch.randn(0, 4), torch.randn(4, 3))]:
        assert_same(fn(x, w), starter.block(x, w), case=f"{describe_tensor('x', x)}, {describe_tensor('w', w)}")
