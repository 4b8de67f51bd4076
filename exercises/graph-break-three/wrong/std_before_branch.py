import torch


def forward(x, w):
    h = x @ w
    scale = h.std()  # taken before the division: the original takes it after
    h = torch.where(h.abs().max() > 10, h / 10, h)
    return torch.tanh(h) * scale
