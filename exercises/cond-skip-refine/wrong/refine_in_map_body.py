import torch
from torch._higher_order_ops.map import map as hop_map


def refine(h, w):
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h


def step(x, w):
    h = x * 2
    # refine runs inside a map's body (over one slice) on every call, and torch.where picks: the work is hidden
    refined = hop_map(refine, h.unsqueeze(0), w).squeeze(0)
    return torch.where(h.abs().amax() > 4.0, refined, h) * 0.5
