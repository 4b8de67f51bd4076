"""In-place updates: the caller's tensor must change, in its own storage."""

from __future__ import annotations

import torch

from judge.checks.failures import WrongAnswer
from judge.checks.numerics import _text, assert_same
from judge.reports.i18n import T
from judge.reports.report import MismatchDiagnostic


def assert_updated_in_place(tensor: torch.Tensor, *, data_ptr: int, before: torch.Tensor,
                            expected: torch.Tensor, case: T | str, what: T | str = T("the tensor")) -> None:
    """Fail with WrongAnswer unless `tensor` still lives at `data_ptr` and now equals `expected`.

    `before` is a copy taken before the call: when nothing changed at all, the message says that the
    update went to a copy instead of the caller's tensor.
    """
    case, what = _text(case), _text(what)
    if tensor.data_ptr() != data_ptr:
        raise WrongAnswer(T("{case}: {what} was given new storage (its `data_ptr` changed); update the caller's "
                            "tensor in place instead of rebinding its data", case=case, what=what),
                          [MismatchDiagnostic(case=case, what=what)])
    if not torch.equal(expected, before) and torch.equal(tensor, before):
        raise WrongAnswer(T("{case}: {what} passed in by the caller did not change at all; the update went to a "
                            "copy. Write into the tensor you were given (an in-place op such as `index_copy_` or "
                            "`copy_`), so the caller sees it.", case=case, what=what),
                          [MismatchDiagnostic(case=case, what=what)])
    assert_same(tensor, expected, case=case, what=what)
