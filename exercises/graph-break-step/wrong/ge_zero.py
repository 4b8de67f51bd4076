import torch


def step(x, w):
    h = x @ w
    h = torch.where(h.sum() >= 0, h * 2, h)  # >= instead of >: differs when the sum is exactly zero
    return torch.relu(h)
