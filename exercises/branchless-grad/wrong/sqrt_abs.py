import torch


def f(s):
    t = s.sum()
    return torch.where(t > 0, torch.sqrt(t.abs()), -t)              # sqrt never sees a negative
