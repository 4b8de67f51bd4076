"""float64 asked, float32 computed: refine runs in float32 whatever the inputs' dtype.

Kind: float64 results compared at float32's precision (4). cond-skip-refine's contract takes float32 or float64
and returns the inputs' dtype. This file casts h and w to float32 for refine ("three matmuls are cheaper in
float32") and casts the result back: float64 in, float64 out, with float32's seven digits.
"""
import torch


def refine(h, w):
    dtype = h.dtype
    h, w = h.float(), w.float()
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h.to(dtype)


def _keep(h, w):
    return h.clone()


def step(x, w):
    h = x * 2
    return torch.cond(h.abs().amax() > 4.0, refine, _keep, (h, w)) * 0.5
