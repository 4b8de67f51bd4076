import torch
from torch.fx import subgraph_rewriter

aten = torch.ops.aten


def x_times_sigmoid(x):
    return aten.mul.Tensor(x, aten.sigmoid.default(x))


def sigmoid_times_x(x):
    return aten.mul.Tensor(aten.sigmoid.default(x), x)


def silu(x):
    return aten.silu.default(x)


def silu_pass(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    # replace_pattern skips a match whose inner nodes (the sigmoid) are used outside it, and recompiles gm
    subgraph_rewriter.replace_pattern(gm, x_times_sigmoid, silu)
    subgraph_rewriter.replace_pattern(gm, sigmoid_times_x, silu)
    return gm
