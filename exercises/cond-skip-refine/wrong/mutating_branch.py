import torch


def refine(h, w):
    """The expensive correction: three matmuls. Only outliers need it."""
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h




def _refine_in_place(h, w):
    for _ in range(3):
        h.sub_(0.1 * torch.tanh(h @ w))  # a branch that mutates its input
    return h.clone()


def _keep(h, w):
    return h.clone()


def step(x, w):
    h = x * 2
    h = torch.cond(h.abs().amax() > 4.0, _refine_in_place, _keep, (h, w))
    return h * 0.5
