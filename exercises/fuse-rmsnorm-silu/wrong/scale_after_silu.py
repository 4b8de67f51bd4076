import torch
import torch.nn.functional as F


def block(x, w, eps=1e-6):
    # 先归一化、激活，最后再乘权重
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return F.silu(h) * w
