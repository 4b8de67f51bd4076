import torch


def f(s):
    t = s.sum()
    return torch.where(t > 0, torch.sqrt(t).nan_to_num(0.0), -t)   # clean the NaN of sqrt(t < 0)
