"""Handed to `warmup` as `step_fn`: the grader's decode step, compiled with torch.compile, in the grader's process.

Each call is sent to the grader as it happens (the inputs' shapes, dtypes, strides and dynamic marks, and the grad
mode): the step that compiles is the grader's own, which serves afterwards. Here a call only computes the decode
step's value eagerly, for a warm-up that looks at it.
"""

import torch

from judge.runner_side.runner import tell_verifier

MARKS = {  # what torch._dynamo's mark_* functions leave on a tensor
    "dynamic": "_dynamo_dynamic_indices", "weak_dynamic": "_dynamo_weak_dynamic_indices",
    "unbacked": "_dynamo_unbacked_indices", "strict_unbacked": "_dynamo_strict_unbacked_indices",
    "static": "_dynamo_static_indices",
}


def decode_step(x):
    """The grader's decode step: x [B, T, d] -> [B, d]."""
    scores = x @ x.transpose(1, 2) / x.shape[-1] ** 0.5
    return (scores.softmax(-1) @ x).mean(1)


def describe(value) -> dict:
    """What a call's argument looks like, as plain data."""
    if isinstance(value, torch.Tensor):
        ranges = {r.dim: [r.min, r.max] for r in getattr(value, "_dynamo_dynamic_range", ())}
        bounds = getattr(value, "_dynamo_unbacked_bounds", {})
        return {"tensor": {
            "type": type(value).__name__, "shape": list(value.shape), "stride": list(value.stride()),
            "dtype": str(value.dtype).removeprefix("torch."), "device": value.device.type,
            "requires_grad": value.requires_grad, "inference": value.is_inference(),
            "marks": {kind: sorted(getattr(value, attr, ())) for kind, attr in MARKS.items()},
            "ranges": {str(d): list(r) for d, r in ranges.items()},
            "bounds": {str(d): list(b) for d, b in bounds.items()}}}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    return {"other": type(value).__name__}


class DecodeStep:
    """The grader's compiled decode step, reached through its calls (each one goes to the grader)."""

    def __call__(self, *args, **kwargs):
        tell_verifier({
            "args": [describe(a) for a in args], "kwargs": {str(k): describe(v) for k, v in kwargs.items()},
            "grad": torch.is_grad_enabled(), "inference": torch.is_inference_mode_enabled(),
            "autocast": torch.is_autocast_enabled("cpu")})
        return decode_step(*args, **kwargs)
