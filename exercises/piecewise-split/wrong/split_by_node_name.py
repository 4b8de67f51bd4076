import torch
from torch.fx.passes.split_module import split_module


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    piece, pieces = 0, {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        # Dynamo 给 practice.attention 的节点起名 attention、attention_1、……
        if node.op == "call_function" and node.name.startswith("attention"):
            piece += 1
            pieces[node] = piece
            piece += 1
        else:
            pieces[node] = piece
    return split_module(gm, None, lambda node: pieces[node], keep_original_order=True)
