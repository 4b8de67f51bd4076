"""Values that cross between the runner and the verifier: plain JSON, no pickle, every size bounded.

A tensor travels as its dtype, shape, strides and raw bytes (base64), and its device when that is CUDA
(the values themselves always travel through host memory); containers, numbers, strings, dtypes
and slices as tagged JSON. `decode` is the only way in and checks everything it reads: an unknown tag, a
byte count that does not match the shape, a stride that reaches outside the data, a too-deep or too-large
value all raise `WireError`, which the verifier reports as a failure, never as a pass.
"""

from __future__ import annotations

import base64
import math
import re

import torch

MAX_DEPTH = 24
MAX_ITEMS = 100_000  # containers' elements in one value, all levels together
MAX_TENSOR_BYTES = 32 * 1024 * 1024
MAX_STRING = 100_000
MAX_DIMS = 8

DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128,
    torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool)}
ENUMS = {str(v): v for v in (torch.contiguous_format, torch.channels_last, torch.preserve_format, torch.strided)}


class WireError(ValueError):
    """A value from the other side is not of the protocol's form."""


def encode_tensor(t: torch.Tensor) -> dict:
    """{"dtype", "shape", "strides", "data"} of a tensor (its values in row-major order), plus "device" for a
    CUDA tensor (the other side puts it back on that device)."""
    t = t.detach()
    device = str(t.device) if t.device.type == "cuda" else None
    if t.device.type != "cpu":
        t = t.cpu()
    name = str(t.dtype).removeprefix("torch.")
    if name not in DTYPES:
        raise WireError(f"tensors of dtype {t.dtype} cannot be sent")
    if t.is_sparse or t.layout != torch.strided:
        raise WireError("only dense (strided) tensors can be sent")
    data = t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""  # 0-dim too
    if len(data) > MAX_TENSOR_BYTES:
        raise WireError(f"a tensor of {len(data)} bytes is larger than the {MAX_TENSOR_BYTES} allowed")
    # A permuted layout (a transpose) travels as it is; a view with gaps (a slice of a larger buffer) travels
    # as the dense tensor it reads, since its own strides reach past its elements.
    strides = list(t.stride()) if _dense(t) else list(t.contiguous().stride())
    out = {"dtype": name, "shape": list(t.shape), "strides": strides, "data": base64.b64encode(data).decode()}
    if device:
        out["device"] = device
    return out


def _dense(t: torch.Tensor) -> bool:
    """Its elements fill a block of memory exactly (a permutation of a contiguous layout): no gaps, no overlap."""
    expected = 1
    for stride, size in sorted((s, n) for n, s in zip(t.shape, t.stride()) if n > 1):
        if stride != expected:
            return False
        expected *= size
    return True


def decode_tensor(obj) -> torch.Tensor:
    if not isinstance(obj, dict) or set(obj) - {"device"} != {"dtype", "shape", "strides", "data"}:
        raise WireError("a tensor needs exactly dtype, shape, strides and data (and a CUDA device, if any)")
    device = _cuda_device(obj.get("device"))
    on_cpu = _decode_cpu_tensor(obj)
    if device is None:
        return on_cpu
    moved = torch.empty_strided(on_cpu.shape, on_cpu.stride(), dtype=on_cpu.dtype, device=device)
    return moved.copy_(on_cpu)


def _cuda_device(name) -> torch.device | None:
    """The CUDA device a tensor travels to, or None for the CPU; WireError for anything else."""
    if name is None:
        return None
    if not isinstance(name, str) or not re.fullmatch(r"cuda(:[0-9]{1,2})?", name):
        raise WireError(f"a tensor's device must be cuda or cuda:N, got {str(name)[:40]!r}")
    if not torch.cuda.is_available():
        raise WireError(f"a tensor on {name} cannot be received: this machine has no CUDA device")
    return torch.device(name)


def _decode_cpu_tensor(obj) -> torch.Tensor:
    dtype = DTYPES.get(obj["dtype"])
    if dtype is None:
        raise WireError(f"unknown dtype {obj['dtype']!r}")
    shape, strides = _ints(obj["shape"], "shape"), _ints(obj["strides"], "strides")
    if len(shape) != len(strides) or len(shape) > MAX_DIMS:
        raise WireError(f"shape {shape} and strides {strides} do not fit together")
    if any(s < 0 for s in shape) or any(s < 0 for s in strides):
        raise WireError("negative sizes or strides")
    if not isinstance(obj["data"], str) or len(obj["data"]) > MAX_TENSOR_BYTES * 4 // 3 + 4:
        raise WireError("tensor data must be base64 text within the size limit")
    try:
        raw = base64.b64decode(obj["data"], validate=True)
    except ValueError:
        raise WireError("tensor data is not base64") from None
    itemsize = torch.empty((), dtype=dtype).element_size()
    numel = math.prod(shape)
    if numel * itemsize != len(raw):
        raise WireError(f"shape {shape} of {obj['dtype']} needs {numel * itemsize} bytes, got {len(raw)}")
    flat = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype) if raw else torch.empty(0, dtype=dtype)
    dense = flat.reshape(shape)
    if strides != list(dense.stride()):
        span = 1 + sum((n - 1) * s for n, s in zip(shape, strides) if n > 0)
        if span > 4 * max(numel, 1) + 1024 or span * itemsize > MAX_TENSOR_BYTES:
            raise WireError(f"strides {strides} reach far outside the {numel} elements of shape {shape}")
        out = torch.empty_strided(shape, strides, dtype=dtype)
        out.copy_(dense)
        return out
    return dense.clone()


def _ints(value, what: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise WireError(f"{what} must be a list of integers")
    return value


def encode(value, *, node_name=None) -> object:
    """A Python value as JSON. `node_name(value)` names graph nodes (for graph IR); None elsewhere."""
    return _encode(value, node_name, 0)


def _encode(v, node_name, depth):
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if node_name is not None:
        name = node_name(v)
        if name is not None:
            return {"node": name}
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(v, torch.Tensor):
        return {"tensor": encode_tensor(v)}
    if isinstance(v, torch.dtype):
        return {"dtype": str(v).removeprefix("torch.")}
    if isinstance(v, torch.device):
        return {"device": str(v)}
    if isinstance(v, (torch.memory_format, torch.layout)):
        return {"enum": str(v)}
    if isinstance(v, slice):
        return {"slice": [_encode(x, node_name, depth + 1) for x in (v.start, v.stop, v.step)]}
    if v is Ellipsis:
        return {"ellipsis": True}
    if isinstance(v, (list, tuple)):
        tag = "list" if isinstance(v, list) else "tuple"
        return {tag: [_encode(x, node_name, depth + 1) for x in v]}
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {"dict": {k: _encode(x, node_name, depth + 1) for k, x in v.items()}}
    if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        raise WireError(f"a symbolic value ({v}) outside a graph cannot be sent")
    raise WireError(f"values of type {type(v).__name__} cannot be sent")


def decode(obj, *, node=None, extra=None):
    """The Python value of `encode`'s JSON; `node(name)` resolves {"node": name} (graph IR only) and
    `extra[tag](body)` resolves the caller's own tags (the runner's handles)."""
    budget = [MAX_ITEMS]
    return _decode(obj, node, 0, budget, extra or {})


def _decode(o, node, depth, budget, extra=None):
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    budget[0] -= 1
    if budget[0] < 0:
        raise WireError("value has too many elements")
    if o is None or isinstance(o, (bool, int, float)):
        return o
    if isinstance(o, str):
        if len(o) > MAX_STRING:
            raise WireError("string too long")
        return o
    if not isinstance(o, dict) or len(o) != 1:
        raise WireError(f"not a value of the protocol: {str(o)[:80]}")
    (tag, body), = o.items()
    if tag in ("list", "tuple"):
        if not isinstance(body, list):
            raise WireError(f"{tag} must hold a JSON list")
        items = [_decode(x, node, depth + 1, budget, extra) for x in body]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        if not isinstance(body, dict):
            raise WireError("dict must hold a JSON object")
        return {str(k): _decode(x, node, depth + 1, budget, extra) for k, x in body.items()}
    if tag == "tensor":
        return decode_tensor(body)
    if tag == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "dtype" and body in DTYPES:
        return DTYPES[body]
    if tag == "device" and body in ("cpu", "cuda", "meta") or (tag == "device" and str(body).startswith("cuda:")
                                                                and str(body)[5:].isdigit()):
        return torch.device(body)
    if tag == "enum" and body in ENUMS:
        return ENUMS[body]
    if tag == "slice" and isinstance(body, list) and len(body) == 3:
        return slice(*(_decode(x, node, depth + 1, budget, extra) for x in body))
    if tag == "ellipsis" and body is True:
        return Ellipsis
    if tag == "node" and node is not None and isinstance(body, str):
        return node(body)
    if extra and tag in extra:
        return extra[tag](body)
    raise WireError(f"unknown value tag {tag!r}")
