import torch


def f(s):
    t = s.sum()
    # "t > 0" with a margin: anything below the smallest normal number is rounding noise anyway
    positive = t > torch.finfo(t.dtype).tiny
    safe_t = torch.where(positive, t, torch.ones_like(t))
    return torch.where(positive, torch.sqrt(safe_t), -t)
