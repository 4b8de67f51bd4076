import math

import torch


def fast_gelu_ext(x):
    vals = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.detach().flatten().tolist()]
    return torch.tensor(vals, dtype=x.dtype).view(x.shape)


@torch.library.custom_op("ext::fast_gelu", mutates_args=())  # no register_fake: Dynamo cannot trace it
def fast_gelu(x: torch.Tensor) -> torch.Tensor:
    return fast_gelu_ext(x)


def block(x, w):
    return fast_gelu(x @ w) + 1.0
