"""float64 asked, float32 computed: the branch of f is chosen in float32.

Kind: float64 results compared at float32's precision (4). f(s) computes t = s.sum() in the input's dtype but
decides t > 0 on t cast to float32 ("the sign is the same in any precision"). A float64 t below float32's smallest
subnormal (about 1.4e-45) rounds to 0 there, so the original's sqrt(t) branch is taken only for float64 sums that
float32 can tell from zero.
"""
import torch


def f(s):
    t = s.sum()
    positive = t.float() > 0
    safe_t = torch.where(positive, t, torch.ones_like(t))
    return torch.where(positive, torch.sqrt(safe_t), -t)
