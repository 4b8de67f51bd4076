import torch


def forward(x, w):
    h = x @ w
    h = torch.where(h.max() > 10, h / 10, h)  # forgets abs(): a large negative value no longer counts
    return torch.tanh(h) * h.std()
