"""Handed to the runner for piecewise-split, and imported by the grader too: the opaque op practice::attention
(and practice_pool::attention, an op of the same name the pooling head calls, where the graph is not split).

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


@torch.library.custom_op("practice_pool::attention", mutates_args=())
def pool_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The pooling head's attention: another op of the same name in another namespace, not a split point."""
    return F.scaled_dot_product_attention(q, k, v)


@pool_attention.register_fake
def _(q, k, v):
    return torch.empty_like(q)
