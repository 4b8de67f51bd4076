import torch


def rms_norm(x, w, eps=1e-6):
    # an eps below the dtype's resolution "does nothing": never use less than finfo.eps
    eps = max(eps, torch.finfo(x.dtype).eps)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
