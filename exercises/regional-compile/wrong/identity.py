import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        return x + F.gelu(self.lin(self.norm(x)))


class Stack(torch.nn.Module):
    def __init__(self, n=8, d=16):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(n))

    def forward(self, x):
        return x                               # nothing traced: zero copies of the block
