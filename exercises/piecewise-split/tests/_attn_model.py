"""The grader's model for piecewise-split: L layers, each calling the opaque op practice::attention."""

import torch
import torch.nn.functional as F
from torch import nn

from judge.remote import grading

PUBLIC = grading().exercise_module("exercise_public")  # public.py registers practice::attention here, as in the runner


class Layer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.mlp = nn.Linear(d, d)

    def forward(self, x):
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        x = x + self.o(torch.ops.practice.attention(q, k, v))
        return x + torch.ops.aten.silu(self.mlp(x))   # an ATen op called directly: no split there


class Model(nn.Module):
    """Embedding-like input projection, L layers, and a pooling head that uses plain SDPA and practice_pool::attention
    (not the op)."""

    def __init__(self, layers, d=16):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.layers = nn.ModuleList(Layer(d) for _ in range(layers))
        self.query = nn.Parameter(torch.randn(1, 1, d))

    def forward(self, x):
        x = self.inp(x)
        for layer in self.layers:
            x = layer(x)
        q = self.query.expand(x.shape[0], 1, x.shape[-1])
        pooled = F.scaled_dot_product_attention(q, x, x)            # pooling: stays in a compiled piece
        return torch.ops.practice_pool.attention(pooled, x, x).squeeze(1)  # so does this op, though named attention


def make(layers, dtype=torch.float32):
    torch.manual_seed(layers)
    return Model(layers).to(dtype).eval()


def is_attention(node) -> bool:
    return node.op == "call_function" and node.target in (torch.ops.practice.attention,
                                                          torch.ops.practice.attention.default)
