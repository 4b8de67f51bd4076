"""Compare results and say exactly where they differ: the input case, the errors, the first mismatches."""

from __future__ import annotations

import torch

from judge.checks.failures import WrongAnswer
from judge.report import Mismatch, MismatchDiagnostic

# Default tolerances per dtype (rtol, atol).
TOLERANCES = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1.3e-6, 1e-5),
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
}
MAX_SHOWN = 5


def describe_tensor(name: str, t: torch.Tensor, note: str = "") -> str:
    """e.g. 'x [4, 16] float32 (sum exactly zero)'."""
    text = f"{name} {list(t.shape)} {str(t.dtype).removeprefix('torch.')}"
    return f"{text} ({note})" if note else text


def assert_same(actual, expected, *, case: str, rtol: float | None = None, atol: float | None = None,
                what: str = "output", equal_nan: bool = True) -> None:
    """Fail with WrongAnswer unless `actual` matches `expected` (tensors, numbers, tuples/lists of them).

    Shapes and dtypes must match exactly; values within rtol/atol (defaults depend on the dtype).
    """
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise WrongAnswer(f"{case}: {what} should be a sequence of {len(expected)} values, got "
                              f"{type(actual).__name__}", [MismatchDiagnostic(case=case, what=what)])
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, case=case, rtol=rtol, atol=atol, what=f"{what}[{i}]", equal_nan=equal_nan)
        return
    if not isinstance(expected, torch.Tensor):
        if isinstance(actual, torch.Tensor) and actual.numel() == 1:
            actual = actual.item()
        if actual != expected and not (_both_nan(actual, expected) and equal_nan):
            if isinstance(expected, float) and isinstance(actual, (int, float)) and abs(actual - expected) <= (
                    (atol or 1e-6) + (rtol or 1e-6) * abs(expected)):
                return
            raise WrongAnswer(f"{case}: {what} is {actual!r}, expected {expected!r}",
                              [MismatchDiagnostic(case=case, what=what,
                                                  first_mismatches=[Mismatch(index=[], expected=_plain(expected),
                                                                             actual=_plain(actual))])])
        return
    if not isinstance(actual, torch.Tensor):
        raise WrongAnswer(f"{case}: {what} should be a tensor, got {type(actual).__name__}",
                          [MismatchDiagnostic(case=case, what=what)])
    diag = MismatchDiagnostic(case=case, what=what, expected_shape=list(expected.shape),
                              actual_shape=list(actual.shape), expected_dtype=_dtype(expected),
                              actual_dtype=_dtype(actual))
    if actual.shape != expected.shape:
        raise WrongAnswer(f"{case}: {what} has shape {list(actual.shape)}, expected {list(expected.shape)}", [diag])
    if actual.dtype != expected.dtype:
        raise WrongAnswer(f"{case}: {what} has dtype {diag.actual_dtype}, expected {diag.expected_dtype} "
                          "(the result must keep the input's dtype)", [diag])
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
    raise WrongAnswer(
        f"{case}: {what} differs in {diag.mismatch_count} of {diag.total} elements; first at index "
        f"{first.index}: expected {first.expected}, got {first.actual}"
        + (f" (max abs error {diag.max_abs_error:.3g})" if diag.max_abs_error is not None else ""), [diag])


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
