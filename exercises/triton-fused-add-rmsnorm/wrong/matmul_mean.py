import torch


def add_rmsnorm(x, residual, w, eps=1e-6):
    h = x + residual
    hf = h.float()
    # mean of squares as a matrix product: the right numbers, but mm is an extern (cuBLAS) call; fusion stops there
    ms = (hf * hf) @ torch.full((hf.shape[-1], 1), 1.0 / hf.shape[-1], device=hf.device)
    out = (hf * torch.rsqrt(ms + eps)).to(h.dtype) * w
    return out, h
