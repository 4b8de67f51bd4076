import torch
from torch.fx.passes.split_module import split_module


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    piece, pieces = 0, {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        # matches practice.attention, but also scaled_dot_product_attention
        if node.op == "call_function" and "attention" in str(node.target):
            pieces[node] = piece + 1
            piece += 2
        else:
            pieces[node] = piece
    return split_module(gm, None, lambda node: pieces[node])
