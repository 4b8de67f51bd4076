import torch


def step(x, w):
    h = x @ w
    h = torch.where(h.sum(0) > 0, h * 2, h)  # sums each column instead of the whole tensor
    return torch.relu(h)
