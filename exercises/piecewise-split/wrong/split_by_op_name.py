import torch
from torch.fx.passes.split_module import split_module

def split_graph(gm):
    # match the op by its short name: any op called `attention`, whatever its namespace
    seen = 0
    part = {}
    for n in gm.graph.nodes:
        if n.op == "call_function" and getattr(n.target, "__name__", "").split(".")[0] == "attention":
            part[n] = 2 * seen + 1
            seen += 1
        else:
            part[n] = 2 * seen
    return split_module(gm, None, lambda n: part[n])
