"""Compare results and say exactly where they differ: the input case, the errors, the first mismatches."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from judge.checks.failures import WrongAnswer
from judge.reports.i18n import T
from judge.reports.report import Mismatch, MismatchDiagnostic

# Default tolerances per dtype (rtol, atol). float64's are float64's: a result computed in float32 and cast back
# (~1e-7 relative) fails them, where 1e-7 passed or failed it by the luck of the draw.
TOLERANCES = {
    torch.float64: (1e-9, 1e-9),
    torch.float32: (1.3e-6, 1e-5),
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
}
MAX_SHOWN = 5


def describe_tensor(name: str, t: torch.Tensor, note: T | str = "") -> T:
    """e.g. 'x [4, 16] float32 (sum exactly zero)', in both languages (`note` a T or plain text)."""
    text = T.same(f"{name} {list(t.shape)} {str(t.dtype).removeprefix('torch.')}")
    return T("{tensor} ({note})", tensor=text, note=note) if note else text


def _text(value: T | str) -> T:
    """`value` as a T: a plain string (a shape, a name) reads the same in both languages."""
    return value if isinstance(value, T) else T.same(str(value))


@dataclass(frozen=True)
class Compared:
    """What a failed `assert_same` compared, kept on its WrongAnswer (`compared`): a mismatch of a compiled graph's
    result is run again under each compiler stage with the same comparison (judge/remote/stages.py)."""

    actual: object
    expected: object
    rtol: float | None
    atol: float | None
    equal_nan: bool

    def agrees(self, actual) -> bool:
        """Whether `actual` in place of the compared one passes the same comparison."""
        try:
            _compare(actual, self.expected, case=T.same(""), rtol=self.rtol, atol=self.atol, what=T.same(""),
                     equal_nan=self.equal_nan)
        except WrongAnswer:
            return False
        return True


def assert_same(actual, expected, *, case: T | str, rtol: float | None = None, atol: float | None = None,
                what: T | str = T("output"), equal_nan: bool = True) -> None:
    """Fail with WrongAnswer unless `actual` matches `expected` (tensors, numbers, tuples/lists of them).

    Shapes and dtypes must match exactly; values within rtol/atol (defaults depend on the dtype). `case` and
    `what` name the input case and the value in messages: a `judge.reports.i18n.T` (both languages) or plain text.
    The WrongAnswer keeps what was compared (`compared`: a `Compared`).
    """
    try:
        _compare(actual, expected, case=case, rtol=rtol, atol=atol, what=what, equal_nan=equal_nan)
    except WrongAnswer as exc:
        exc.compared = Compared(actual, expected, rtol, atol, equal_nan)
        raise


def _compare(actual, expected, *, case: T | str, rtol: float | None, atol: float | None, what: T | str,
             equal_nan: bool) -> None:
    case, what = _text(case), _text(what)
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise WrongAnswer(T("{case}: {what} should be a sequence of {count} values, got `{type}`", case=case,
                                what=what, count=len(expected), type=type(actual).__name__),
                              [MismatchDiagnostic(case=case, what=what)])
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, case=case, rtol=rtol, atol=atol, what=T.join([what, f"[{i}]"], sep=""),
                     equal_nan=equal_nan)
        return
    if not isinstance(expected, torch.Tensor):
        if isinstance(actual, torch.Tensor) and actual.numel() == 1:
            actual = actual.item()
        if actual != expected and not (_both_nan(actual, expected) and equal_nan):
            if isinstance(expected, float) and isinstance(actual, (int, float)) and abs(actual - expected) <= (
                    (atol or 1e-6) + (rtol or 1e-6) * abs(expected)):
                return
            raise WrongAnswer(T("{case}: {what} is `{actual}`, expected `{expected}`", case=case, what=what,
                                actual=repr(actual), expected=repr(expected)),
                              [MismatchDiagnostic(case=case, what=what,
                                                  first_mismatches=[Mismatch(index=[], expected=_plain(expected),
                                                                             actual=_plain(actual))])])
        return
    if not isinstance(actual, torch.Tensor):
        raise WrongAnswer(T("{case}: {what} should be a tensor, got `{type}`", case=case, what=what,
                            type=type(actual).__name__),
                          [MismatchDiagnostic(case=case, what=what)])
    diag = MismatchDiagnostic(case=case, what=what, expected_shape=list(expected.shape),
                              actual_shape=list(actual.shape), expected_dtype=_dtype(expected),
                              actual_dtype=_dtype(actual))
    if actual.shape != expected.shape:
        raise WrongAnswer(T("{case}: {what} has shape {actual}, expected {expected}", case=case, what=what,
                            actual=list(actual.shape), expected=list(expected.shape)), [diag])
    if actual.dtype != expected.dtype:
        raise WrongAnswer(T("{case}: {what} has dtype {actual}, expected {expected} (the result must keep the "
                            "input's dtype)", case=case, what=what, actual=diag.actual_dtype,
                            expected=diag.expected_dtype), [diag])
    default_rtol, default_atol = TOLERANCES.get(expected.dtype, (0.0, 0.0))
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    diag.rtol, diag.atol = rtol, atol
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if e.is_floating_point() or e.is_complex():
        close = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        close = a == e
    if bool(close.all()):
        return
    bad = (~close).nonzero()
    diag.mismatch_count, diag.total = int(bad.shape[0]), e.numel()
    if e.is_floating_point():
        finite = torch.isfinite(a) & torch.isfinite(e)
        err = (a.double() - e.double()).abs()
        if bool(finite.any()):
            diag.max_abs_error = float(err[finite].max())
            diag.max_rel_error = float((err[finite] / e.double().abs()[finite].clamp_min(1e-30)).max())
    for idx in bad[:MAX_SHOWN].tolist():
        diag.first_mismatches.append(Mismatch(index=idx, expected=_plain(e[tuple(idx)].item()),
                                              actual=_plain(a[tuple(idx)].item())))
    first = diag.first_mismatches[0]
    fields = dict(case=case, what=what, count=diag.mismatch_count, total=diag.total, index=first.index,
                  expected=first.expected, actual=first.actual)
    if diag.max_abs_error is not None:
        error = format(diag.max_abs_error, ".3g")
        message = T("{case}: {what} differs in {count} of {total} elements; first at index {index}: expected "
                    "{expected}, got {actual} (max abs error {error})", error=error, **fields)
    else:
        message = T("{case}: {what} differs in {count} of {total} elements; first at index {index}: expected "
                    "{expected}, got {actual}", **fields)
    raise WrongAnswer(message, [diag])


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _both_nan(a, b) -> bool:
    return isinstance(a, float) and isinstance(b, float) and a != a and b != b


def _plain(value):
    if isinstance(value, (bool, int, float, str)):
        if isinstance(value, float) and value != value:
            return "nan"
        if isinstance(value, float) and value in (float("inf"), float("-inf")):
            return str(value)
        return value
    return repr(value)
