"""Hidden tests for bucket-padding: at most 3 static graphs of the grader's core over T = 1..64, exact results."""

import pytest
import torch

from judge.checks import CompileCounter, Recompile, WrongAnswer, assert_same, describe_tensor
from judge.checks.serving import assert_static_graphs
from judge.report import RecompileDiagnostic

B, D = 3, 8
# Every length 1..64, in an order that does not start at the smallest.
ALL_LENGTHS = [37, 1, 64, 2, 16, 17, 33, 32, 15, 63] + [t for t in range(1, 65)
                                                       if t not in (37, 1, 64, 2, 16, 17, 33, 32, 15, 63)]
SOME_LENGTHS = [1, 2, 7, 16, 17, 31, 33, 50, 64]


def core(x):
    """The grader's own copy of `core`: the learner's file cannot change what is compiled."""
    return (x.softmax(1) * x).sum(1)


def shifted_core(x):
    """core plus a constant: a result that only core_fn can produce (padding cannot change the + 1000)."""
    return core(x) + 1000.0


class CompiledCore:
    """core compiled with dynamic=False under a recording backend; remembers what it was called with."""

    def __init__(self, backend="eager", fn=core):
        self.counter = CompileCounter(backend)
        self.compiled = torch.compile(fn, backend=self.counter, dynamic=False)
        self.seen = []

    def __call__(self, x):
        self.seen.append(tuple(x.shape))
        return self.compiled(x)


def serve_all(entry, core_fn, lengths, dtype=torch.float32, scale=1.0):
    """(x, served output) for each length; fails if a call never reaches core_fn."""
    results = []
    for t in lengths:
        x = torch.randn(B, t, D, dtype=dtype) * scale
        before = len(core_fn.seen)
        out = entry(core_fn, x)
        if len(core_fn.seen) == before:
            raise WrongAnswer(f"serve(core_fn, x) with {describe_tensor('x', x)} never called core_fn: the work "
                              "must go through the compiled core the grader passes in.")
        results.append((x, out))
    return results


def test_at_most_three_graphs(entry):
    """Lengths 1..64 compile the grader's core at most 3 times"""
    core_fn = CompiledCore()
    serve_all(entry, core_fn, ALL_LENGTHS)
    compiles = core_fn.counter.frame_count
    if compiles > 3:
        sizes = sorted({shape[1] for shape in core_fn.seen})
        shown = ", ".join(map(str, sizes[:12])) + (", ..." if len(sizes) > 12 else "")
        raise Recompile(f"core was compiled {compiles} times over the lengths 1..64 (core_fn was called with "
                        f"{len(sizes)} distinct T: {shown}); at most 3 static graphs are allowed. Pad every T up "
                        "to one of at most 3 bucket sizes.",
                        [RecompileDiagnostic(compiles=compiles, limit=3,
                                             guard_failures=[f"T = {t}" for t in sizes[:10]])])


def test_graphs_are_static(entry):
    """Every compiled graph of core has static shapes"""
    core_fn = CompiledCore()
    serve_all(entry, core_fn, SOME_LENGTHS)
    assert_static_graphs(core_fn.counter.graphs, what="core")


def test_same_as_unpadded(entry):
    """Served results equal core on the unpadded input"""
    core_fn = CompiledCore()
    for x, out in serve_all(entry, core_fn, SOME_LENGTHS):
        assert_same(out, core(x), case=describe_tensor("x", x, f"T = {x.shape[1]}"))


def test_result_comes_from_core_fn(entry):
    """serve returns what core_fn computes"""
    core_fn = CompiledCore(fn=shifted_core)
    for x, out in serve_all(entry, core_fn, [4, 20, 64]):
        assert_same(out, shifted_core(x), case=describe_tensor(
            "x", x, f"T = {x.shape[1]}; this core_fn returns core(x) + 1000, and serve must return its result"))


def test_large_values(entry):
    """Exact results when |x| is as large as 1e5"""
    core_fn = CompiledCore()
    for x, out in serve_all(entry, core_fn, [3, 20, 40], scale=1e5):
        assert_same(out, core(x), case=describe_tensor("x", x, "values up to about 1e5 in magnitude"))


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16],
                         ids=["float64", "bfloat16", "float16"])
def test_other_dtypes(entry, dtype):
    """float64, bfloat16 and float16 inputs give the unpadded results in their own dtype"""
    core_fn = CompiledCore()
    for x, out in serve_all(entry, core_fn, [1, 10, 40], dtype=dtype):
        assert_same(out, core(x), case=describe_tensor("x", x, f"T = {x.shape[1]}"))


def test_inductor(entry):
    """With a real Inductor compile of core, served results equal the unpadded ones"""
    core_fn = CompiledCore(backend="inductor")
    for x, out in serve_all(entry, core_fn, [5, 11]):
        assert_same(out, core(x), case=describe_tensor("x", x, f"T = {x.shape[1]}, backend inductor"))
    if core_fn.counter.frame_count > 2:
        raise Recompile(f"with Inductor, core was compiled {core_fn.counter.frame_count} times for T = 5 and "
                        "T = 11; padding to buckets should need at most 2.")
