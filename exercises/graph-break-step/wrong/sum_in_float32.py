import torch


def step(x, w):
    h = x @ w
    # 只需要和的符号，用 float32 求和就够了，还更快
    positive = h.sum(dtype=torch.float32) > 0
    h = torch.where(positive, h * 2, h)
    return torch.relu(h)
