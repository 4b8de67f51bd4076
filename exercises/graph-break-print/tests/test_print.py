"""Hidden tests for graph-break-print: one graph, the same numbers as the original, the eager call still prints.

The runner compiles f and sends back the graph Dynamo captured; every numeric check runs that one graph here,
on inputs the runner never saw (it gets other values of the same shapes). The print check is an eager call in
the runner, which must see x: each call gets a fresh random x, and the line must carry the mean this side
computes from that x, which f cannot print without computing it.
"""

import contextlib
import io

import torch

from judge import remote
from judge.checks import WrongAnswer, assert_same, compile_one_graph

CASES = [
    ("x [4, 16] float32", lambda: torch.randn(4, 16)),
    ("x [3, 8] float32, all negative (relu gives zeros)", lambda: -torch.rand(3, 8) - 0.1),
    ("x [2, 5, 7] float64", lambda: torch.randn(2, 5, 7, dtype=torch.float64)),
]
PRINT_CASES = [
    ("x [4, 16]", lambda: torch.randn(4, 16)),
    ("x [3, 5, 6]", lambda: torch.rand(3, 5, 6) * 4 - 1),
    ("x [2, 9] float64", lambda: torch.randn(2, 9, dtype=torch.float64) + 0.5),
    # Means whose 4 decimals end in zeros: the line must keep them ("0.0000", "1.5000"), as the :.4f format does.
    ("x [3, 4], all negative (mean activation exactly 0)", lambda: -torch.rand(3, 4) - 0.1),
    ("x [2, 3] of 0.5 (mean activation exactly 1.5)", lambda: torch.full((2, 3), 0.5)),
]


def _quietly(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


def _debug_line(x) -> str:
    """The line the original f prints for x, computed here."""
    return f"[debug] mean activation = {(torch.relu(x) * 3).mean().item():.4f}"


def test_one_graph(entry):
    """torch.compile(f, fullgraph=True) captures one graph"""
    compile_one_graph(entry, torch.randn(4, 16))


def test_same_numbers(entry, starter):
    """The compiled f gives the same numbers as the original"""
    compiled = entry.compile(fullgraph=True)
    for case, make in CASES:
        x = make()
        assert_same(compiled(x), _quietly(starter.f, x.clone()), case=case)


def test_eager_call_still_prints(entry):
    """Called without torch.compile, f still prints the debug line"""
    for case, make in PRINT_CASES:
        x = make()
        expected = _debug_line(x)
        lines = remote.call_printing(entry, x, what="f(x) called eagerly").printed.splitlines()
        if expected not in lines:
            shown = "\n  ".join(lines[:5]) or "(nothing)"
            raise WrongAnswer(f"calling f(x) eagerly with {case} should print the line\n  {expected}\n"
                              f"but it printed:\n  {shown}\nKeep the debug print for eager runs; only the "
                              "compiled run may skip it.")


def test_inductor_compile(entry, starter):
    """A real Inductor compile (the default backend) gives the same numbers"""
    x = torch.randn(8, 32)
    compiled = remote.RemoteCompiled(entry, {"fullgraph": True}, what="f compiled with Inductor",
                                     local_backend="inductor")
    assert_same(compiled(x), _quietly(starter.f, x.clone()), case="x [8, 32] float32, backend inductor")
