import torch
import torch.nn.functional as F


def block(x, w, eps=1e-6):
    # mean of squares as a matrix product: right numbers, but mm is an extern call that stops fusion
    d = x.shape[-1]
    ms = (x * x) @ torch.full((d, 1), 1.0 / d, dtype=x.dtype)
    return F.silu(x * torch.rsqrt(ms + eps) * w)
