import torch


def forward(x, w):
    h = x @ w
    h = torch.cond(h.abs().max() > 10, lambda t: t / 10, lambda t: t.clone(), (h,))
    return torch.tanh(h) * h.std()
