import torch
from torch.fx.passes.split_module import split_module


def is_attention(node: torch.fx.Node) -> bool:
    # Dynamo records the call as the OpOverloadPacket torch.ops.practice.attention
    return node.op == "call_function" and node.target in (torch.ops.practice.attention,
                                                          torch.ops.practice.attention.default)


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    piece, pieces = 0, {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if is_attention(node):
            piece += 1                 # attention opens a piece of its own...
            pieces[node] = piece
            piece += 1                 # ...and the next operation starts a new one
        else:
            pieces[node] = piece
    return split_module(gm, None, lambda node: pieces[node], keep_original_order=True)
