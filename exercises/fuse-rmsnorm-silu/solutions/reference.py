import torch
import torch.nn.functional as F


def rmsnorm(x, w, eps=1e-6):
    # 普通的张量运算：Dynamo 能捕获，Inductor 能把它和后面的 SiLU 融合  # en: plain tensor operations: Dynamo captures them, Inductor can fuse them with the SiLU that follows
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def block(x, w):
    return F.silu(rmsnorm(x, w))
