import torch


def f(s):
    t = s.sum()
    if t.item() > 0:                                               # a Python number: still a Python branch
        return torch.sqrt(t)
    return -t
