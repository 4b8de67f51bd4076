import torch


def rms_norm(x, w, eps=1e-6):
    eps = eps or 1e-6          # "None or 0 means the default"
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
