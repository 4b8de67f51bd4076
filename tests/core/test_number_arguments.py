"""A float argument that changes between calls: Dynamo hands it to the graph as a 0-d tensor, and the verifier
takes it from each of its own calls (judge/runner_side/compiling.py describes it by name and position,
judge/remote/compiled.py binds it), never the value the runner compiled with."""

from __future__ import annotations

import pytest
import torch

from judge.remote.compiled import _number_argument
from judge.remote.failures import Protocol
from judge.runner_side.compiling import Session


def rms(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def described(calls) -> list[list[dict]]:
    """The input descriptions of every graph the runner's session captured over `calls` (args, kwargs)."""
    torch._dynamo.reset()
    session = Session(rms, {"fullgraph": True}, {})
    for args, kwargs in calls:
        session.current = (args, kwargs)
        session.compiled(*args, **kwargs)
    return [inputs for _gm, inputs in session.graphs]


def test_a_float_that_changed_is_described_by_name_position_and_default():
    x, w = torch.randn(3, 4), torch.randn(4)
    graphs = described([((x, w), {}), ((x, w, 1e-2), {})])
    number = [spec for spec in graphs[-1] if spec["kind"] == "scalar"]
    assert number == [{"kind": "scalar", "name": "eps", "dtype": "float64", "index": 2, "default": 1e-6}]
    assert not any(spec["kind"] == "scalar" for spec in graphs[0])  # the first compile inlined the default


@pytest.mark.parametrize("args, kwargs, expected", [
    ((1, 2, 0.5), {}, 0.5),          # by position
    ((1, 2), {"eps": 0.25}, 0.25),   # by name
    ((1, 2), {}, 1e-6),              # the parameter's default
])
def test_the_verifier_takes_the_number_from_its_own_call(args, kwargs, expected):
    spec = {"kind": "scalar", "name": "eps", "dtype": "float64", "index": 2, "default": 1e-6}
    value = _number_argument(spec, args, kwargs, "f")
    assert value.dtype is torch.float64 and value.dim() == 0 and value.item() == expected


@pytest.mark.parametrize("spec, args", [
    ({"kind": "scalar", "name": "eps", "dtype": "float64", "index": 2}, (1, 2)),  # absent, no default
    ({"kind": "scalar", "name": "eps", "dtype": "complex128", "index": 0}, (0.5,)),  # a dtype not allowed
    ({"kind": "scalar", "name": "eps", "dtype": "float64", "index": 0}, (torch.ones(1),)),  # not a number
    ({"kind": "scalar", "name": "eps", "dtype": "float64", "index": 0}, (True,)),
    ({"kind": "scalar", "name": "eps", "dtype": "float64", "index": True}, (0.5, 0.5)),
])
def test_a_malformed_number_input_is_a_protocol_error(spec, args):
    with pytest.raises(Protocol):
        _number_argument(spec, args, {}, "f")
