"""judge.checks.serving: serving under fail_on_recompile, guard explanations, static graphs."""

import pytest
import torch

from judge.checks import CompileCounter, Recompile, WrongAnswer
from judge.checks.serving import assert_static_graphs, explain_guard, serve_without_recompile, short_guard


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def double(x):
    return x * 2


def cases(*lengths):
    return [(f"T={t}", (torch.randn(2, t),)) for t in lengths]


def test_serving_within_the_warmed_graphs_returns_outputs():
    compiled = torch.compile(double, backend=CompileCounter())
    for t in (8, 4):
        compiled(torch.randn(2, t))
    outputs = serve_without_recompile(compiled, cases(3, 100), what="double")
    assert [tuple(o.shape) for o in outputs] == [(2, 3), (2, 100)]


def test_a_recompile_names_the_case_and_the_failed_guard():
    compiled = torch.compile(double, backend=CompileCounter())
    compiled(torch.randn(2, 8))
    with pytest.raises(Recompile) as info:
        serve_without_recompile(compiled, cases(8, 5), what="double")
    message = str(info.value.message)
    assert "T=5" in message and "size mismatch at index 1. expected 8, actual 5" in message
    assert info.value.diagnostics[0].guard_failures


def test_size_one_after_a_dynamic_graph_is_explained_as_specialisation():
    compiled = torch.compile(double, backend=CompileCounter())
    for t in (8, 4):
        compiled(torch.randn(2, t))
    with pytest.raises(Recompile, match="sizes 0 and 1 are always specialised"):
        serve_without_recompile(compiled, cases(1), what="double")


def test_other_errors_pass_through():
    def broken(x):
        raise ValueError("not a recompile")

    with pytest.raises(ValueError):
        serve_without_recompile(broken, cases(3))


@pytest.mark.parametrize("reason, words", [
    ("GLOBAL_STATE changed: grad_mode ", "grad mode"),
    ("2 <= x.size()[1]", "specialised"),
    ("tensor 'x' size mismatch at index 2. expected 32, actual 64", "never seen"),
    ("L['self'].step == 3", ""),
])
def test_explain_guard(reason, words):
    text = str(explain_guard(reason))
    assert (words in text) if words else text == ""


def test_short_guard_drops_the_source_comment():
    assert short_guard("self.step == 7    # self.step += 1  # f.py:10 in forward (HINT: ...)") == "self.step == 7"


def test_static_graphs_pass_and_dynamic_graphs_fail():
    counter = CompileCounter()
    compiled = torch.compile(double, backend=counter, dynamic=False)
    compiled(torch.randn(2, 8))
    assert_static_graphs(counter.graphs)
    x = torch.randn(2, 6)
    torch._dynamo.mark_dynamic(x, 1)
    compiled(x)
    with pytest.raises(WrongAnswer, match="dynamic graph"):
        assert_static_graphs(counter.graphs, what="double")
