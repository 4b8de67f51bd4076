import math

import torch


def fast_gelu_ext(x):                  # pretend this is an unregistered C/pybind kernel
    vals = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.detach().flatten().tolist()]
    return torch.tensor(vals, dtype=x.dtype).view(x.shape)



# the whole projection as one op: the matmul goes inside, next to the vendor kernel
@torch.library.custom_op("ext::gelu_linear", mutates_args=())
def gelu_linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return fast_gelu_ext(x @ w)


@gelu_linear.register_fake
def _(x, w):
    return x.new_empty(*x.shape[:-1], w.shape[-1])


def block(x, w):
    return gelu_linear(x, w) + 1.0
