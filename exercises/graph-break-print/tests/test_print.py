import contextlib
import io

import torch

from judge.checks import WrongAnswer, assert_same, compile_one_graph

CASES = [
    ("x [4, 16] float32", lambda: torch.randn(4, 16)),
    ("x [3, 8] float32, all negative (relu gives zeros)", lambda: -torch.rand(3, 8) - 0.1),
    ("x [2, 5, 7] float64", lambda: torch.randn(2, 5, 7, dtype=torch.float64)),
]


def _quietly(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


def test_one_graph(entry):
    """torch.compile(f, fullgraph=True) captures one graph"""
    compile_one_graph(entry, torch.randn(4, 16))


def test_same_numbers(entry, starter):
    """The compiled f gives the same numbers as the original"""
    compiled = torch.compile(entry, fullgraph=True, backend="eager")
    for case, make in CASES:
        x = make()
        assert_same(_quietly(compiled, x), _quietly(starter.f, x), case=case)


def test_eager_call_still_prints(entry):
    """Called without torch.compile, f still prints the debug line"""
    x = torch.randn(4, 16)
    expected = f"[debug] mean activation = {(torch.relu(x) * 3).mean().item():.4f}"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        entry(x)
    lines = out.getvalue().splitlines()
    if expected not in lines:
        shown = "\n".join(lines[:5]) or "(nothing)"
        raise WrongAnswer(f"calling f(x) eagerly with x [4, 16] should print the line\n  {expected}\n"
                          f"but it printed:\n  {shown}\nKeep the debug print for eager runs; only the "
                          "compiled run may skip it.")


def test_inductor_compile(entry, starter):
    """A real Inductor compile (the default backend) gives the same numbers"""
    x = torch.randn(8, 32)
    compiled = torch.compile(entry, fullgraph=True)
    assert_same(_quietly(compiled, x), _quietly(starter.f, x), case="x [8, 32] float32, backend inductor")
