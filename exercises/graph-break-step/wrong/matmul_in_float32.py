import torch


def step(x, w):
    # 用 float32 做矩阵乘更快，最后再转回输入的 dtype，结果类型不变
    h = (x.float() @ w.float()).to(x.dtype)
    h = torch.where(h.sum() > 0, h * 2, h)
    return torch.relu(h)
