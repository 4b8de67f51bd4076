import torch


def step(x, w):
    h = x @ w
    h = torch.where(h.sum() > 0, h * 2, h)
    return torch.relu(h).float()  # loses float64
