"""Values crossing to the runner and back: example inputs, arguments encoded, results decoded.

The runner never sees a hidden input: `example_like` gives a value of the same shape, dtype and device with
other values. What comes back is decoded from untrusted data (`judge.shared.wire`); a graph in it is rebuilt from
the allowlist and sealed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.fx

from judge.checks.sealed import sealed_module
from judge.remote.context import current
from judge.remote.failures import Protocol
from judge.remote.graphs import rebuild
from judge.reports.i18n import T, in_code
from judge.shared import ir, wire

RETURNED_GRAPH = T("the graph your code returned")


@dataclass(frozen=True)
class RunnerObject:
    """Something that lives in the runner, named by `spec` (the entry point, a public object, a kept result)."""

    spec: dict

    def kept(self, handle: str):
        """An object the runner keeps under `handle`, named the way this one is (`judge.remote.Ref`)."""
        return type(self)({"handle": str(handle)})


def example_like(value):
    """A value of the same shape, dtype and device with other values: what the runner sees instead of a hidden
    input."""
    if isinstance(value, torch.Tensor):
        gen = current().examples()
        t = value.detach()
        if t.dtype == torch.bool:
            return (torch.rand(t.shape, generator=gen) > 0.5).to(t.device)
        if t.is_floating_point() or t.is_complex():
            scale = float(t.abs().max()) if t.numel() else 1.0
            out = (torch.randn(t.shape, dtype=torch.float64, generator=gen) * (scale or 1.0)).to(t.dtype).to(t.device)
            return out.requires_grad_(value.requires_grad)
        lo, hi = (int(t.min()), int(t.max())) if t.numel() else (0, 0)
        return torch.randint(lo, hi + 1, t.shape, dtype=t.dtype, generator=gen).to(t.device)
    if isinstance(value, (list, tuple)):
        return type(value)(example_like(v) for v in value)
    if isinstance(value, dict):
        return {k: example_like(v) for k, v in value.items()}
    return value


def encode_arg(value):
    """An argument as the runner reads it: a runner object by its name, a graph as IR, anything else as wire."""
    if isinstance(value, RunnerObject):
        return value.spec
    if isinstance(value, torch.fx.GraphModule):
        return {"graph": ir.to_ir(value)}
    if isinstance(value, (list, tuple)):
        return {"list" if isinstance(value, list) else "tuple": [encode_arg(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": {k: encode_arg(v) for k, v in value.items()}}
    return wire.encode(value)


def signature(encoded):
    """An encoded argument without tensor data: what a compile's answer may depend on (not values)."""
    if isinstance(encoded, dict):
        if "data" in encoded and "dtype" in encoded:
            return {k: v for k, v in encoded.items() if k != "data"}
        return {k: signature(v) for k, v in encoded.items()}
    if isinstance(encoded, list):
        return [signature(v) for v in encoded]
    return encoded


def decode_result(obj, named_like: RunnerObject):
    """A value the runner sent: data decoded, a graph rebuilt and sealed, a kept object as a runner object of
    `named_like`'s type."""
    try:
        return wire.decode(obj, extra={"handle": named_like.kept,
                                       "graph": lambda body: sealed_module(rebuild(body), what=RETURNED_GRAPH)})
    except wire.WireError as exc:
        raise Protocol(T("your code's process sent a malformed value: `{error}`", error=in_code(exc))) from None
    except KeyError:
        raise Protocol(T("your code's process sent a malformed value")) from None


def result_or_object(obj, named_like: RunnerObject):
    """A call's result: a kept object (`{"handle": ...}`) as a runner object, anything else decoded."""
    if isinstance(obj, dict) and "handle" in obj:
        return named_like.kept(obj["handle"])
    return decode_result(obj, named_like)
