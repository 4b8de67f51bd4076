"""What Inductor generated: the code of each compiled graph and the kernels in it."""

from __future__ import annotations

import re

import torch
from torch._inductor.utils import run_and_get_code

CPP_KERNEL = re.compile(r"\bcpp_fused_\w+")


def inductor_code(fn, *args, **compile_kwargs):
    """Compile `fn` with Inductor, call it, and return (output, generated source files)."""
    compiled = torch.compile(fn, backend="inductor", **compile_kwargs)
    output, codes = run_and_get_code(compiled, *args)
    return output, codes


def cpp_kernel_names(codes: list[str]) -> list[str]:
    """The distinct generated C++ kernel names, e.g. ['cpp_fused_mean_mul_pow_rsqrt_silu_0']."""
    return sorted(set(CPP_KERNEL.findall("\n".join(codes))))
