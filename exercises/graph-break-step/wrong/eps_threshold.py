import torch


def step(x, w):
    h = x @ w
    # 和可能带着舍入误差，留一点余量再判断正负
    h = torch.where(h.sum() > 1e-6, h * 2, h)
    return torch.relu(h)
