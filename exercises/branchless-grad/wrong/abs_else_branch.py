import torch


def f(s):
    t = s.sum()
    positive = t > 0
    safe_t = torch.where(positive, t, torch.ones_like(t))
    # else 分支里 t <= 0，-t 就是 |t|
    return torch.where(positive, torch.sqrt(safe_t), t.abs())
