import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(16)
        self.lin = torch.nn.Linear(16, 16)

    @torch.compiler.nested_compile_region
    def forward(self, x):
        return x + F.gelu(self.lin(self.norm(x)))


class Stack(torch.nn.Module):
    def __init__(self, n=8, d=16):  # the inputs are [B, T, 16]: every block is 16 wide
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(n))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
