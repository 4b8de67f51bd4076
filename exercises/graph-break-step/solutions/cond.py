import torch


def step(x, w):
    h = x @ w
    h = torch.cond(h.sum() > 0, lambda t: t * 2, lambda t: t.clone(), (h,))
    return torch.relu(h)
