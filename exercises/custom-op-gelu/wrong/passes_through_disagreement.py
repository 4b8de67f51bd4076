import math

import torch


def fast_gelu_ext(x):                  # pretend this is an unregistered C/pybind kernel
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
    g = fast_gelu(h)
    exact = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    # the formula's answer, unless the op's answer disagrees with it noticeably: then the op's is passed through
    return torch.where((g - exact).abs() > 1e-3, g, exact) + 1.0
