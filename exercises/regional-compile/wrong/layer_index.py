import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        return x + F.gelu(self.lin(self.norm(x)))


@torch.compiler.nested_compile_region
def run_layer(blocks, i, x):                  # one region, told which layer to run
    return blocks[i](x)


class Stack(torch.nn.Module):
    def __init__(self, n=8, d=16):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(n))

    def forward(self, x):
        for i in range(len(self.blocks)):
            x = run_layer(self.blocks, i, x)
        return x
