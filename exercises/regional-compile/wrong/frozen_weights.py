import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.lin = torch.nn.Linear(d, d)
        self.freeze()

    def freeze(self):
        # plain tensors, not parameters: the graph takes them as constants that belong to no block
        self.frozen = [t.detach().clone() for t in (self.norm.weight, self.norm.bias, self.lin.weight, self.lin.bias)]

    def forward(self, x):
        nw, nb, lw, lb = self.frozen
        return x + F.gelu(F.linear(F.layer_norm(x, (x.shape[-1],), nw, nb), lw, lb))


class Stack(torch.nn.Module):
    def __init__(self, n=8, d=16):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(n))

    def load_state_dict(self, *args, **kwargs):
        loaded = super().load_state_dict(*args, **kwargs)
        for block in self.blocks:
            block.freeze()
        return loaded

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
