import torch


def refine(h, w):
    """The expensive correction: three matmuls. Only outliers need it."""
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h


def _keep(h, w):
    return h.clone()  # a branch may not return its input itself (aliasing): a copy, no matmul


def step(x, w):
    h = x * 2
    h = torch.cond(h.abs() > 4.0, refine, _keep, (h, w))  # refine where |h| is over 4
    return h * 0.5
