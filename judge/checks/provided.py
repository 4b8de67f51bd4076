"""Provenance: a result must flow through the operator the exercise hands the learner, not around it.

Where an exercise gives the learner's code an operator to call (a custom op such as `ext::fast_gelu`, an attention
kernel, `core_fn`, a decode step), a graph can call it and still take its numbers from elsewhere: multiply the
op's result by 0 and add `F.gelu(x)`, or carry a value computed once as a constant. The numbers match; the
exercise is not solved. So the verifier runs the operator through a `Provided`: its implementation here, which
`replaced()` swaps for a different function of the same inputs, in every graph and every expected value that
calls it. `assert_result_flows_through` then requires the learner's output to change exactly as the expected
one does under that swap.

The swap is drawn per grading (`drawn`, from the grading's seed, judge/shared/draw.py): the operator's true result plus
a
perturbation of every element, each of its own sign and size, the sizes spread over four decades from twice the
check's tolerance up. A graph cannot imitate it (no formula of the true result gives it) and cannot pass the
operator's result through only where it disagrees with a recomputation of its own: wherever the perturbation is
below that graph's threshold, the graph returns its recomputation, off by more than the tolerance. The probing run
is otherwise an ordinary one: inputs of the same distribution, the operator called as often.

    GELU = Provided(vendor_kernel, patch=[(starter, "fast_gelu_ext")])   # what torch.ops.ext.* runs here
    assert_result_flows_through(GELU, compiled, starter.block, x, w, case=...)

The learner's kernel never runs here: the operator's implementation is the verifier's own, so is its replacement.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable

import torch
import torch.utils._pytree as pytree

from judge import remote
from judge.checks.expected import expected_first
from judge.checks.failures import CheckFailure, WrongAnswer
from judge.checks.numerics import TOLERANCES, assert_same
from judge.reports.i18n import T
from judge.reports.report import Verdict
from judge.shared import draw

# A replacement's perturbation of an element is (atol + rtol |v|) times 10**u, u uniform in DECADES: never within the
# check's tolerance, and spread wide enough that no pass-through threshold above it misses every element.
DECADES = (0.3, 4.3)


def drawn(value, seed: int, *, rtol: float | None = None, atol: float | None = None):
    """`value` with every floating element moved by a perturbation drawn from `seed` alone (its own sign, its size
    log-uniform over DECADES in units of the check's tolerance): the same value and seed give the same result."""
    def move(leaf):
        if not isinstance(leaf, torch.Tensor) or not (leaf.is_floating_point() or leaf.is_complex()):
            return leaf
        real = leaf.real if leaf.is_complex() else leaf
        default_rtol, default_atol = TOLERANCES.get(real.dtype, (1e-6, 1e-6))
        r, a = default_rtol if rtol is None else rtol, default_atol if atol is None else atol
        gen = torch.Generator().manual_seed(seed)
        sign = torch.randint(0, 2, leaf.shape, generator=gen, dtype=torch.float64) * 2 - 1
        size = 10 ** (DECADES[0] + (DECADES[1] - DECADES[0]) * torch.rand(leaf.shape, generator=gen,
                                                                          dtype=torch.float64))
        unit = a + r * real.detach().abs().to(torch.float64).cpu()
        return (leaf + (sign * size * unit).to(device=leaf.device, dtype=real.dtype)).to(leaf.dtype)
    return pytree.tree_map(move, value)


class Provided:
    """An operator or function handed to the learner's code, as the verifier runs it: `fn` until `replaced()`.

    Register the `Provided` itself as the operator's implementation (`lib.impl(name, provided, "CPU")`,
    `op.register_kernel("cpu")(provided)`), and name in `patch` each `(module, attribute)` where the expected
    side calls the original (e.g. the starter's own `fast_gelu_ext`), so that both sides see the same swap."""

    def __init__(self, fn: Callable, *, name: T | str, patch: Iterable[tuple[object, str]] = ()):
        self.fn, self.name, self.patch = fn, name, list(patch)
        self.impl: Callable = fn
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.impl(*args, **kwargs)

    def replacement(self, seed: int | None = None, *, rtol: float | None = None,
                    atol: float | None = None) -> Callable:
        """The function `replaced()` swaps in by default: the original's result, `drawn` from `seed` (default: this
        grading's stream for this operator, `draw.stream(grading seed, "provenance <name>")`)."""
        original = self.fn
        if seed is None:
            seed = draw.stream(remote.grading().seed, f"provenance {self.name}")
        return lambda *args, **kwargs: drawn(original(*args, **kwargs), seed, rtol=rtol, atol=atol)

    @contextlib.contextmanager
    def replaced(self, by: Callable | None = None):
        """Within the block, the operator (and each patched name) computes `by` (default: `replacement()`)."""
        by = by or self.replacement()
        before, saved = self.impl, [(owner, attr, getattr(owner, attr)) for owner, attr in self.patch]
        self.impl = by
        for owner, attr, _ in saved:
            setattr(owner, attr, by)
        try:
            yield by
        finally:
            self.impl = before
            for owner, attr, value in saved:
                setattr(owner, attr, value)


def assert_result_flows_through(provided: Provided, fn: Callable, expected_fn: Callable, *inputs, case: T | str,
                                rtol: float | None = None, atol: float | None = None,
                                what: T | str = T("output"), by: Callable | None = None):
    """Fail with WrongAnswer unless, with `provided` replaced by another function of its inputs, `fn(*inputs)` (the
    learner's graph, run here) still equals `expected_fn(*inputs)` (which calls `provided` too): an output that
    does not change as the expected one does was not computed from the operator's result.

    The expected values are computed first, on untouched copies; a replacement that leaves the expected value
    as it was would prove nothing, so that fails the check as an error of the exercise."""
    plain = expected_first(expected_fn, lambda *a, **k: None, *inputs)[0]
    with provided.replaced(by or provided.replacement(rtol=rtol, atol=atol)):
        expected, actual = expected_first(expected_fn, fn, *inputs)
    if _equal(plain, expected):
        raise CheckFailure(T("{case}: replacing {name} does not change the expected value, so this check proves "
                             "nothing; it is not passed", case=case, name=provided.name),
                           verdict=Verdict.INTERNAL_ERROR)
    try:
        assert_same(actual, expected, case=case, rtol=rtol, atol=atol, what=what)
    except WrongAnswer as exc:
        raise WrongAnswer(T("{case}: with {name} replaced by another function of the same inputs, your result "
                            "did not change the way it must: it does not come from {name}'s result (is it "
                            "discarded, multiplied by 0, or computed some other way?). Use what {name} returns. "
                            "{detail}", case=case, name=provided.name, detail=exc.message), exc.diagnostics) from None
    return actual


def _equal(a, b) -> bool:
    leaves_a, leaves_b = pytree.tree_leaves(a), pytree.tree_leaves(b)
    if len(leaves_a) != len(leaves_b):
        return False
    for x, y in zip(leaves_a, leaves_b):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or not torch.equal(x, y):
                return False
        elif x != y:
            return False
    return True
