import torch


def forward(x, w):
    h = x @ w
    h = torch.where(h.abs().max() >= 10, h / 10, h)  # >= also divides when the max is exactly 10
    return torch.tanh(h) * h.std()
