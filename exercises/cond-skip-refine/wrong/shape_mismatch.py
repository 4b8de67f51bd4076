import torch


def refine(h, w):
    """The expensive correction: three matmuls. Only outliers need it."""
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h




def _keep(h, w):
    return h.clone()


def _refine_rows(h, w):
    return refine(h, w).amax(0, keepdim=True)  # one row: the branches disagree in shape


def step(x, w):
    h = x * 2
    h = torch.cond(h.abs().amax() > 4.0, _refine_rows, _keep, (h, w))
    return h * 0.5
