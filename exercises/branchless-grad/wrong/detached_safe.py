import torch


def f(s):
    t = s.sum()
    safe_t = torch.where(t > 0, t, torch.ones_like(t)).detach()    # "no gradient through the safe value"
    return torch.where(t > 0, torch.sqrt(safe_t), -t)
