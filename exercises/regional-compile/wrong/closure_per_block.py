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
        # a region per block, each closing over its own block
        self.runs = [torch.compiler.nested_compile_region(lambda x, b=b: b(x)) for b in self.blocks]

    def forward(self, x):
        for run in self.runs:
            x = run(x)
        return x
