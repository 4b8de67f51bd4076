import torch


def add_rmsnorm(x, residual, w, eps=1e-6):
    residual += x                             # vLLM's kernel updates residual in place; this contract does not
    hf = residual.float()
    out = (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps)).to(residual.dtype) * w
    return out, residual
