import torch


def f(s):
    t = s.sum()
    positive = (t > 0).to(t.dtype)
    safe_t = torch.where(t > 0, t, torch.ones_like(t))
    return positive * torch.sqrt(safe_t) - (1 - positive) * t
