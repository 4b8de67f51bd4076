import torch
from torch.fx.passes.split_module import split_module


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    piece, pieces = 0, {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if node.op == "call_function" and node.target in (torch.ops.practice.attention,
                                                          torch.ops.practice.attention.default):
            piece += 1          # a new piece starts at the attention, but the ops after it join that piece
        pieces[node] = piece
    return split_module(gm, None, lambda node: pieces[node])
