import torch


def rms_norm(x, w, eps=1e-6):
    mean_sq = torch.square(x).sum(dim=-1, keepdim=True) / x.shape[-1]
    return x / torch.sqrt(mean_sq + eps) * w
