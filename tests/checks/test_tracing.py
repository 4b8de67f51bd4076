"""judge.checks.tracing: plain Python errors raised while Dynamo traces the learner's code."""

import torch

from judge.checks import GraphBreak
from judge.checks.tracing import as_graph_break, raised_while_tracing


def index_with_item(cache, pos):
    p = int(pos)
    cache[:, p] = 1.0
    return cache


def test_an_index_error_from_tracing_becomes_a_graph_break():
    compiled = torch.compile(index_with_item, backend="eager", fullgraph=True)
    try:
        compiled(torch.zeros(2, 4), torch.tensor([1]))
    except Exception as exc:  # noqa: BLE001 - the test inspects whatever Dynamo raised
        assert raised_while_tracing(exc)
        failure = as_graph_break(exc, what="fullgraph", explanation="int(pos) reads the tensor's value")
    else:
        raise AssertionError("torch 2.13 is expected to fail tracing int(pos) used as an index")
    assert isinstance(failure, GraphBreak)
    assert "int(pos) reads the tensor's value" in str(failure.message)
    assert failure.diagnostics[0].reason.startswith("IndexError")


def test_an_ordinary_error_is_not_a_tracing_error():
    assert not raised_while_tracing(ValueError("bad shape"))
