import torch


def refine(h, w):
    """The expensive correction: three matmuls. Only outliers need it."""
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h




def step(x, w):
    h = x * 2
    m = (h.abs().amax() > 4.0).to(h.dtype)
    h = m * refine(h, w) + (1 - m) * h  # a blend still computes refine
    return h * 0.5
