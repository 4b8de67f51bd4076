import math

import torch


def fast_gelu_ext(x):                  # pretend this is an unregistered C/pybind kernel
    vals = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.detach().flatten().tolist()]
    return torch.tensor(vals, dtype=x.dtype).view(x.shape)



# fold the "+ 1.0" into the op as well: one node does the whole elementwise tail
@torch.library.custom_op("ext::gelu_plus_one", mutates_args=())
def gelu_plus_one(x: torch.Tensor) -> torch.Tensor:
    return fast_gelu_ext(x) + 1.0


@gelu_plus_one.register_fake
def _(x):
    return torch.empty_like(x)


def block(x, w):
    return gelu_plus_one(x @ w)
