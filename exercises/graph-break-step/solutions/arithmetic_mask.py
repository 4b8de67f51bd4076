import torch


def step(x, w):
    h = x @ w
    scale = 1 + (h.sum() > 0).to(h.dtype)  # 1 or 2, as a tensor
    return torch.relu(h * scale)
