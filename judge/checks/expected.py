"""Expected values first: computed on untouched copies of the inputs before the learner's graph runs.

A hidden test that calls the learner's graph and only then computes the expected value from the same tensors
can be fooled by a graph that changes them. These helpers fix the order, so no test can get it wrong:

    assert_same_result(compiled, starter.step, x, w, case=...)      # expected on clones of x, w; then compiled(x, w)
    expected, out = expected_first(starter.step, compiled, x, w)     # the pair, for a test that compares itself

(Every graph the runner sent also runs sealed, on copies: `judge.checks.sealed`.)
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from judge.checks.numerics import assert_same
from judge.reports.i18n import T


def pristine(value):
    """A copy of test inputs that nothing run later can reach: tensors detached and cloned (strides kept where they
    can be), lists, tuples and dicts rebuilt, anything else (a number, a `judge.remote.Ref`, a module) as it is."""
    if isinstance(value, torch.Tensor):
        with torch.no_grad():
            return value.detach().clone()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(pristine(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(pristine(v) for v in value)
    if isinstance(value, dict):
        return {k: pristine(v) for k, v in value.items()}
    return value


def expected_first(expected_fn: Callable, fn: Callable, *inputs, **kwargs) -> tuple[object, object]:
    """`(expected, actual)`: `expected_fn` on pristine copies of the inputs, computed (and copied) first; then `fn`
    (the learner's compiled function, a rebuilt graph) on the inputs themselves."""
    expected = pristine(expected_fn(*pristine(inputs), **pristine(kwargs)))
    return expected, fn(*inputs, **kwargs)


def assert_same_result(fn: Callable, expected_fn: Callable, *inputs, case: T | str, rtol: float | None = None,
                       atol: float | None = None, what: T | str = T("output"), equal_nan: bool = True, **kwargs):
    """Fail with WrongAnswer unless `fn(*inputs)` matches `expected_fn` on the same inputs (see `assert_same`);
    the expected value is computed first, from untouched copies. Returns what `fn` returned."""
    expected, actual = expected_first(expected_fn, fn, *inputs, **kwargs)
    assert_same(actual, expected, case=case, rtol=rtol, atol=atol, what=what, equal_nan=equal_nan)
    return actual
