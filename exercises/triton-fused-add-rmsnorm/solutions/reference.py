import torch


def add_rmsnorm(x, residual, w, eps=1e-6):
    # 普通的张量运算：Inductor 看得见每一步，  # en: plain tensor operations: Inductor sees every step,
    # 把加法、归约和缩放融合成一个 Triton kernel，同时写出两个结果  # en: and fuses the addition, the reduction and the scaling into one Triton kernel that writes both results
    h = x + residual
    hf = h.float()
    out = (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps)).to(h.dtype) * w
    return out, h
