import torch


def f(s):
    t = s.sum()
    positive = t >= 0                                              # sqrt(0) == -0, so the boundary looks free
    safe_t = torch.where(positive, t, torch.ones_like(t))
    return torch.where(positive, torch.sqrt(safe_t), -t)
