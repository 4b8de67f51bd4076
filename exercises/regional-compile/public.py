"""The grader's stack of blocks (the same as the starter's): the expected values, with the grader's own weights."""

import torch
import torch.nn.functional as F

N_BLOCKS, D = 8, 16


class Block(torch.nn.Module):
    def __init__(self, d=D):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        return x + F.gelu(self.lin(self.norm(x)))


class Stack(torch.nn.Module):
    def __init__(self, n=N_BLOCKS, d=D):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(n))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
