import torch


def f(s):
    t = s.sum()
    positive = t > 0
    # torch.where computes both branches, and backward sends 0 * (local gradient) into the branch not taken.
    # sqrt(t) for t <= 0 has gradient NaN or inf, and 0 * NaN = NaN, so feed sqrt a safe value (1) there.
    safe_t = torch.where(positive, t, torch.ones_like(t))
    return torch.where(positive, torch.sqrt(safe_t), -t)
