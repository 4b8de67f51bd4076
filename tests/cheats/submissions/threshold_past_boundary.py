"""Values just past a threshold: refine starts a little above 4.0, where no hand-picked input sits.

Kind: hand-picked values far from thresholds (3). cond-skip-refine's outliers make the largest |h| 6.0, 4.0
exactly (not refined) or 1.8: nothing between 4.0 and 6.0. This file refines only when the largest |h| exceeds
4.5 ("a margin against rounding"), so an input whose largest |h| lies in (4.0, 4.5] is served unrefined.
"""
import torch


def refine(h, w):
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h


def _keep(h, w):
    return h.clone()


def step(x, w):
    h = x * 2
    return torch.cond(h.abs().amax() > 4.5, refine, _keep, (h, w)) * 0.5
