"""Hidden tests for bucket-padding: at most 3 static shapes reach the grader's core over T = 1..64, exact results.

`core_fn` is an operator (public.py): the runner compiles serve(core_fn, x) with fullgraph=True and
dynamic=False, so the graph it sends back holds the learner's padding and one opaque call of core_fn. That
graph runs here, where core_fn is this side's own kernel: it notes every shape it receives (each distinct
shape is one static compile of core) and computes core itself, or core + 1000, or core compiled by Inductor.
"""

import pytest
import torch

from judge import remote
from judge.checks import Recompile, WrongAnswer, assert_same, describe_tensor
from judge.checks.serving import assert_static_graphs
from judge.report import RecompileDiagnostic

B, D = 3, 8
# Every length 1..64, in an order that does not start at the smallest.
ALL_LENGTHS = [37, 1, 64, 2, 16, 17, 33, 32, 15, 63] + [t for t in range(1, 65)
                                                       if t not in (37, 1, 64, 2, 16, 17, 33, 32, 15, 63)]
SOME_LENGTHS = [1, 2, 7, 16, 17, 31, 33, 50, 64]


def core(x):
    """The grader's own copy of `core`: the learner's file cannot change what core_fn computes."""
    return (x.softmax(1) * x).sum(1)


def shifted_core(x):
    """core plus a constant: a result that only core_fn can produce (padding cannot change the + 1000)."""
    return core(x) + 1000.0


class Core:
    """This side's kernel of torch.ops.practice.core: what it computes now, and the shapes it received."""

    fn = staticmethod(core)
    seen: list = []
    registered = False


@pytest.fixture
def core_kernel(public):
    """Run core_fn with this side's kernel (public.py registered the operator here too)."""
    if not Core.registered:
        public.core_op.register_kernel("cpu")(lambda x: (Core.seen.append(tuple(x.shape)), Core.fn(x))[1])
        Core.registered = True
    Core.fn, Core.seen = core, []
    yield Core
    Core.fn = core


def serve_all(entry, lengths, dtype=torch.float32, scale=1.0, require_core=True):
    """(x, served output) for each length; each length compiles serve afresh (one static graph per T) and
    runs that graph here. Fails if serve marks a dimension dynamic, or (require_core) never reaches core_fn."""
    results = []
    for t in lengths:
        x = torch.randn(B, t, D, dtype=dtype) * scale
        remote.reset_runner()  # a fresh Dynamo cache: 64 static graphs of serve exceed its recompile limit
        compiled = remote.RemoteCompiled(entry, {"fullgraph": True, "dynamic": False},
                                         what=f"serve(core_fn, x) with {describe_tensor('x', x)}")
        before = len(Core.seen)
        try:
            out = compiled(remote.public("core_fn"), x)
        except remote.LearnerError as exc:
            if "forbidden callable" in exc.message and "mark_" in exc.message:
                raise WrongAnswer("serve marks a dimension dynamic (torch._dynamo.mark_dynamic and friends): core's "
                                  "graphs would no longer be static, since a mark overrides dynamic=False. This "
                                  "exercise is about static graphs: pad T up to a few bucket sizes instead.",
                                  exc.diagnostics) from None
            raise
        if require_core and len(Core.seen) == before:
            raise WrongAnswer(f"serve(core_fn, x) with {describe_tensor('x', x)} never called core_fn: the work "
                              "must go through the core the grader passes in.")
        assert_static_graphs(compiled.graph_modules, what="serve")
        results.append((x, out))
    return results


def test_graphs_are_static(entry, core_kernel):
    """Every shape that reaches core is static"""
    serve_all(entry, SOME_LENGTHS, require_core=False)


def test_at_most_three_graphs(entry, core_kernel):
    """Lengths 1..64 compile the grader's core at most 3 times"""
    serve_all(entry, ALL_LENGTHS)
    shapes = sorted(set(core_kernel.seen))
    if len(shapes) > 3:
        sizes = sorted({shape[1] for shape in shapes if len(shape) > 1})
        shown = ", ".join(map(str, sizes[:12])) + (", ..." if len(sizes) > 12 else "")
        raise Recompile(f"core was compiled {len(shapes)} times over the lengths 1..64 (core_fn was called with "
                        f"{len(shapes)} distinct shapes, T = {shown}); at most 3 static graphs are allowed. Pad every "
                        "T up to one of at most 3 bucket sizes.",
                        [RecompileDiagnostic(compiles=len(shapes), limit=3,
                                             guard_failures=[f"x of shape {list(s)}" for s in shapes[:10]])])


def test_same_as_unpadded(entry, core_kernel):
    """Served results equal core on the unpadded input"""
    for x, out in serve_all(entry, SOME_LENGTHS):
        assert_same(out, core(x), case=describe_tensor("x", x, f"T = {x.shape[1]}"))


def test_result_comes_from_core_fn(entry, core_kernel):
    """serve returns what core_fn computes"""
    core_kernel.fn = shifted_core
    for x, out in serve_all(entry, [4, 20, 64]):
        assert_same(out, shifted_core(x), case=describe_tensor(
            "x", x, f"T = {x.shape[1]}; this core_fn returns core(x) + 1000, and serve must return its result"))


def test_large_values(entry, core_kernel):
    """Exact results when |x| is as large as 1e5"""
    for x, out in serve_all(entry, [3, 20, 40], scale=1e5):
        assert_same(out, core(x), case=describe_tensor("x", x, "values up to about 1e5 in magnitude"))


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16],
                         ids=["float64", "bfloat16", "float16"])
def test_other_dtypes(entry, core_kernel, dtype):
    """float64, bfloat16 and float16 inputs give the unpadded results in their own dtype"""
    for x, out in serve_all(entry, [1, 10, 40], dtype=dtype):
        assert_same(out, core(x), case=describe_tensor("x", x, f"T = {x.shape[1]}"))


def test_inductor(entry, core_kernel):
    """With a real Inductor compile of core, served results equal the unpadded ones"""
    from judge.checks import CompileCounter

    counter = CompileCounter("inductor")
    core_kernel.fn = torch.compile(core, backend=counter, dynamic=False)
    for x, out in serve_all(entry, [5, 11]):
        assert_same(out, core(x), case=describe_tensor("x", x, f"T = {x.shape[1]}, backend inductor"))
    if counter.frame_count > 2:
        raise Recompile(f"with Inductor, core was compiled {counter.frame_count} times for T = 5 and "
                        "T = 11; padding to buckets should need at most 2.")


def test_float16_large_values(entry, core_kernel):
    """float16 inputs as large as float16 allows (|x| up to about 4e4) give the unpadded results"""
    for x, out in serve_all(entry, [3, 20, 40], dtype=torch.float16, scale=1e4):
        assert_same(out, core(x), case=describe_tensor("x", x, "float16 values up to about 4e4 in magnitude"))

