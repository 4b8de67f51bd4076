"""Handed to the runner for piecewise-split, and imported by the grader too: the opaque op practice::attention.

The runner imports this before the learner's file, so `torch.ops.practice.attention` exists there (the graphs
the grader sends call it); the grader registers the same op, so that the split graph that comes back can be
rebuilt and run on its own inputs.
"""

import torch
import torch.nn.functional as F


@torch.library.custom_op("practice::attention", mutates_args=())
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention, opaque to the compiler (stands in for a paged-KV attention kernel)."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


@attention.register_fake
def _(q, k, v):
    return torch.empty_like(q)
