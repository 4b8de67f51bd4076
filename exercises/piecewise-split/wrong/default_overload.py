import torch
from torch.fx.passes.split_module import split_module


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    piece, pieces = 0, {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        # the ATen-graph spelling; Dynamo's graph holds the packet torch.ops.practice.attention
        if node.op == "call_function" and node.target is torch.ops.practice.attention.default:
            pieces[node] = piece + 1
            piece += 2
        else:
            pieces[node] = piece
    return split_module(gm, None, lambda node: pieces[node])
