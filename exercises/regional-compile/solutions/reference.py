import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.lin = torch.nn.Linear(d, d)

    # 一个嵌套编译区域：Dynamo 只追踪一次块的计算，之后的块都调用同一个子图（参数作为输入传进去）  # en: a nested compile region: Dynamo traces the block's computation once and every later block calls that one subgraph (its parameters passed in as inputs)
    @torch.compiler.nested_compile_region
    def forward(self, x):
        return x + F.gelu(self.lin(self.norm(x)))


class Stack(torch.nn.Module):
    def __init__(self, n=8, d=16):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(n))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
