import torch


def rms_norm(x, w, eps=1e-6):
    # the sum of squares as a product with a column of ones, divided afterwards: still an extern mm
    d = x.shape[-1]
    mean_sq = torch.matmul(x * x, torch.ones(d, 1, dtype=x.dtype)) / d
    return x * torch.rsqrt(mean_sq + eps) * w
