import torch
import torch.nn.functional as F


def rms_norm(x, w, eps=1e-6):
    # F.linear instead of @: still a matrix product, an extern call between two passes over x
    d = x.shape[-1]
    mean_sq = F.linear(x * x, torch.full((1, d), 1.0 / d, dtype=x.dtype))
    return x * torch.rsqrt(mean_sq + eps) * w
