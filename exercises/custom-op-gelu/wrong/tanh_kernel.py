import math

import torch


def fast_gelu_ext(x):                  # pretend this is an unregistered C/pybind kernel
    vals = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.detach().flatten().tolist()]
    return torch.tensor(vals, dtype=x.dtype).view(x.shape)



@torch.library.custom_op("ext::fast_gelu", mutates_args=())
def fast_gelu(x: torch.Tensor) -> torch.Tensor:
    # "fast" gelu: the tanh approximation, no Python loop over the elements
    return torch.nn.functional.gelu(x, approximate="tanh")


@fast_gelu.register_fake
def _(x):
    return torch.empty_like(x)


def block(x, w):
    return fast_gelu(x @ w) + 1.0
