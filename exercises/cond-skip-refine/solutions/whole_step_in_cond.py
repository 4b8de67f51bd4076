import torch


def refine(h, w):
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h


def _refined(x, w):
    return refine(x * 2, w) * 0.5


def _plain(x, w):
    return x * 2 * 0.5


def step(x, w):
    return torch.cond((x * 2).abs().amax() > 4.0, _refined, _plain, (x, w))
