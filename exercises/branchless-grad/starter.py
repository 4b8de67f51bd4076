import torch


def f(s):
    t = s.sum()
    if t > 0:
        return torch.sqrt(t)
    return -t
