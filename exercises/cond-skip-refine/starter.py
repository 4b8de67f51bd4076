import torch


def refine(h, w):
    """The expensive correction: three matmuls. Only outliers need it."""
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h


def step(x, w):
    h = x * 2
    if h.abs().amax() > 4.0:  # data-dependent Python branch: a graph break
        h = refine(h, w)
    return h * 0.5
