"""Hidden tests for branchless-grad: one graph; outputs and gradients equal eager's on both sides of 0 and at 0."""

import pytest
import torch

from judge.checks import assert_no_host_sync, compile_one_graph, describe_tensor
from judge.checks.autograd import assert_same_value_and_grads

CASES = {
    "positive": lambda dtype: torch.rand(5, dtype=dtype) + 0.1,
    "negative": lambda dtype: -torch.rand(5, dtype=dtype) - 0.1,
    "zero": lambda dtype: torch.zeros(5, dtype=dtype),
    "cancels_to_zero": lambda dtype: torch.tensor([1.5, -1.5, 2.0, -2.0], dtype=dtype),
}
NOTES = {"positive": "t > 0", "negative": "t < 0", "zero": "t = 0", "cancels_to_zero": "nonzero s, t exactly 0"}


def check(compiled, starter, name, dtype=torch.float32, backend="aot_eager"):
    s = CASES[name](dtype)
    case = describe_tensor("s", s, f"{NOTES[name]}, backend {backend}")
    assert_same_value_and_grads(compiled, starter.f, s, case=case, names=["s"])


def test_one_graph(entry):
    """torch.compile(f, fullgraph=True) captures one graph"""
    compile_one_graph(entry, CASES["negative"](torch.float32), what="f under fullgraph=True")


def test_no_host_sync(entry):
    """The graph reads no tensor value into Python (.item(), .tolist())"""
    captured = compile_one_graph(entry, CASES["positive"](torch.float32))
    assert_no_host_sync(captured.graphs, what="the graph of f")


@pytest.mark.parametrize("name", list(CASES))
def test_outputs_and_gradients(entry, starter, name):
    """Output and gradient of s equal eager's (backend aot_eager)"""
    check(torch.compile(entry, backend="aot_eager", fullgraph=True), starter, name)


def test_float64(entry, starter):
    """float64: outputs and gradients equal eager's for t > 0, t < 0 and t = 0"""
    compiled = torch.compile(entry, backend="aot_eager", fullgraph=True)
    for name in ("positive", "negative", "zero"):
        check(compiled, starter, name, dtype=torch.float64)


def test_inductor(entry, starter):
    """With a real Inductor compile: outputs and gradients equal eager's for t > 0, t < 0 and t = 0"""
    compiled = torch.compile(entry, fullgraph=True)
    for name in ("positive", "negative", "zero"):
        check(compiled, starter, name, backend="inductor")
