"""Gradients: run a function forward and backward and compare outputs and gradients.

Both sides run with grad mode on, whatever the process was left in; the expected side runs first, and an input
that requires grad but gets no gradient there fails the check (it would otherwise be skipped, proving nothing)."""

from __future__ import annotations

import torch

from judge.checks.expected import pristine
from judge.checks.failures import CheckFailure
from judge.checks.numerics import assert_same
from judge.reports.i18n import T
from judge.reports.report import Verdict


def value_and_grads(fn, *inputs: torch.Tensor):
    """`(output, grads)`: `fn` on fresh leaf copies of `inputs`, then backward of the output's sum.

    Each grad is the gradient for the input at the same position (None when none flowed to it).
    """
    leaves = [t.detach().clone().requires_grad_(t.is_floating_point() or t.is_complex()) for t in inputs]
    with torch.enable_grad():
        output = fn(*leaves)
        if output.requires_grad:  # otherwise no gradient reaches any input: every grad stays None
            output.sum().backward()
    return output.detach(), [leaf.grad for leaf in leaves]


def assert_same_value_and_grads(fn, expected_fn, *inputs: torch.Tensor, case: T | str, names=None,
                                rtol: float | None = None, atol: float | None = None) -> None:
    """Fail with WrongAnswer unless `fn` matches `expected_fn` in its output and in every input's gradient.

    NaN in one and not the other is a mismatch; `names` label the inputs in messages ("s", "x", ...).
    """
    names = list(names or [T("input {i}", i=i) for i in range(len(inputs))])
    ref_out, ref_grads = value_and_grads(expected_fn, *pristine(inputs))
    out, grads = value_and_grads(fn, *inputs)
    assert_same(out, ref_out, case=case, rtol=rtol, atol=atol, what=T("output"))
    for name, grad, ref_grad, given in zip(names, grads, ref_grads, inputs):
        what = T("gradient of {name}", name=name)
        if ref_grad is None:
            if given.is_floating_point() or given.is_complex():
                raise CheckFailure(T("{case}: the expected side computed no gradient of {name}, so the gradients "
                                     "cannot be compared; this check proves nothing and is not passed",
                                     case=case, name=name), verdict=Verdict.INTERNAL_ERROR)
            continue
        if grad is None:
            assert_same(None, ref_grad, case=case, what=what)
        assert_same(grad, ref_grad, case=case, rtol=rtol, atol=atol, what=what)
