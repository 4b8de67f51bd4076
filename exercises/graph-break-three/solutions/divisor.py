import torch


def forward(x, w):
    h = x @ w
    h = h / torch.where(h.abs().max() > 10, 10.0, 1.0)  # dividing by 1.0 leaves h exactly as it was
    return torch.tanh(h) * h.std()
