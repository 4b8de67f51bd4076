import math

import torch


@torch.compiler.disable  # Dynamo skips the kernel... by breaking the graph around it
def fast_gelu_ext(x):
    vals = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.detach().flatten().tolist()]
    return torch.tensor(vals, dtype=x.dtype).view(x.shape)


def block(x, w):
    return fast_gelu_ext(x @ w) + 1.0
