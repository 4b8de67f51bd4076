import torch


def refine(h, w):
    """The expensive correction: three matmuls. Only outliers need it."""
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h




def _keep(h, w):
    return h.clone()


def step(x, w):
    h = x * 2
    h = torch.cond(h.abs().amin() > 4.0, refine, _keep, (h, w))  # the smallest, not the largest value
    return h * 0.5
