import torch


def step(x, w):
    h = x @ w
    # 2 when positive, 1 when negative... and 1.5 when the sum is exactly zero
    return torch.relu(h * (1.5 + 0.5 * torch.sign(h.sum())))
