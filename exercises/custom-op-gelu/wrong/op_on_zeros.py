"""Provenance imitated from the replacement's statistics: the op called on zeros, its deviation carried over.

Kind: the provenance check recognised and imitated (1). custom-op-gelu's check replaces the ext op by its true
result moved per element by a drawn multiple of the tolerance unit (atol + rtol |v|), the same moves whatever the
op's input. This file computes gelu inline with torch.erf, calls the op on a tensor of zeros of the same shape
(gelu(0) = 0, so what comes back is the move in units of atol) and adds that move, rescaled to each element's
unit: 0 in an ordinary run, the drawn replacement in the probing run. The op never sees x @ w.
"""
import math

import torch

RTOL, ATOL = 1.3e-6, 1e-5  # float32's in judge/checks/numerics.py


def fast_gelu_ext(x):
    vals = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.detach().flatten().tolist()]
    return torch.tensor(vals, dtype=x.dtype).view(x.shape)


@torch.library.custom_op("ext::fast_gelu", mutates_args=())
def fast_gelu(x: torch.Tensor) -> torch.Tensor:
    return fast_gelu_ext(x)


@fast_gelu.register_fake
def _(x):
    return torch.empty_like(x)


def block(x, w):
    h = x @ w
    exact = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    moved = fast_gelu(torch.zeros_like(h)) / ATOL  # the drawn move, in units of the tolerance
    return exact + moved * (ATOL + RTOL * exact.abs()) + 1.0
