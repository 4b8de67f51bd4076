import torch
import torch.nn.functional as F


def block(x, w):
    # drops eps: 0 / 0 for an all-zero row
    return F.silu(x / x.pow(2).mean(-1, keepdim=True).sqrt() * w)
