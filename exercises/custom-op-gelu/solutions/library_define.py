import math

import torch


def fast_gelu_ext(x):
    vals = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.detach().flatten().tolist()]
    return torch.tensor(vals, dtype=x.dtype).view(x.shape)


# the lower-level API: declare the schema, then a CPU kernel and a fake (meta) kernel
torch.library.define("ext::gelu_kernel", "(Tensor x) -> Tensor")


@torch.library.impl("ext::gelu_kernel", "cpu")
def _(x):
    return fast_gelu_ext(x)


@torch.library.register_fake("ext::gelu_kernel")
def _(x):
    return x.new_empty(x.shape)


def block(x, w):
    return torch.ops.ext.gelu_kernel(x @ w) + 1.0
