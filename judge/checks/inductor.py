"""What Inductor generated: the code of each compiled graph and the kernels in it."""

from __future__ import annotations

import re

import torch
from torch._inductor.utils import run_and_get_code

CPP_KERNEL = re.compile(r"\bcpp_fused_\w+")
# A generated Triton kernel (GPU): pointwise, reduction, persistent reduction, template, foreach.
TRITON_KERNEL = re.compile(r"\btriton_(?:poi|red|per|tem|for)_\w+")


def inductor_code(fn, *args, **compile_kwargs):
    """Compile `fn` with Inductor, call it, and return (output, generated source files)."""
    compiled = torch.compile(fn, backend="inductor", **compile_kwargs)
    output, codes = run_and_get_code(compiled, *args)
    return output, codes


def cpp_kernel_names(codes: list[str]) -> list[str]:
    """The distinct generated C++ kernel names, e.g. ['cpp_fused_mean_mul_pow_rsqrt_silu_0']."""
    return sorted(set(CPP_KERNEL.findall("\n".join(codes))))


def triton_kernel_names(codes: list[str]) -> list[str]:
    """The distinct generated Triton kernel names, e.g. ['triton_per_fused_add_mean_mul_pow_rsqrt_0']."""
    return sorted(set(TRITON_KERNEL.findall("\n".join(codes))))


def triton_kernel_source(codes: list[str], name: str) -> str:
    """The Triton source of kernel `name` as Inductor wrote it (the `@triton.jit def ...` text), or ''."""
    for code in codes:
        start = code.find(f"async_compile.triton('{name}'")
        if start < 0:
            continue
        body = code[start:].split("\x27\x27\x27", 2)  # the kernel is a triple-quoted string
        if len(body) >= 2:
            return body[1].strip()
    return ""
