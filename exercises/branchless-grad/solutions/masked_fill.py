import torch


def f(s):
    t = s.sum()
    positive = t > 0
    safe_t = t.masked_fill(~positive, 1.0)  # sqrt 在 t <= 0 时看到 1：不走的分支梯度也是有限的
    return torch.where(positive, safe_t.sqrt(), -t)
