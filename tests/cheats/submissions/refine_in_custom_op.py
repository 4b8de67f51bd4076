"""Work hidden where the counter cannot see: refine inside a custom operator of the file's own.

Kind: cost counted on what the counter can see into (2). cond-skip-refine counts the ATen operators its graph ran;
an operator of the file's own namespace is one opaque call whose inside (refine's three matmuls and tanhs, run on
every call here) no dispatch mode sees. The graph calls it and picks with torch.where.
"""
import torch


@torch.library.custom_op("hidden::refine", mutates_args=())
def refine_op(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h


@refine_op.register_fake
def _(h, w):
    return torch.empty_like(h)


def step(x, w):
    h = x * 2
    return torch.where(h.abs().amax() > 4.0, refine_op(h, w), h) * 0.5
