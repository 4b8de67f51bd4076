import torch


def add_rmsnorm(x, residual, w, eps=1e-6):
    h = x + residual
    hf = h.float()
    # LayerNorm habit: eps after the square root
    out = (hf / (hf.pow(2).mean(-1, keepdim=True).sqrt() + eps)).to(h.dtype) * w
    return out, h
