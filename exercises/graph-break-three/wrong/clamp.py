import torch


def forward(x, w):
    h = x @ w
    h = h.clamp(-10, 10)  # clipping is not scaling: the original divides the whole tensor by 10
    return torch.tanh(h) * h.std()
