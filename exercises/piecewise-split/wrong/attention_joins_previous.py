import torch
from torch.fx.passes.split_module import split_module


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    piece, pieces = 0, {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        pieces[node] = piece
        if node.op == "call_function" and node.target in (torch.ops.practice.attention,
                                                          torch.ops.practice.attention.default):
            piece += 1                 # 注意力结束一段，后面的运算开始新的一段
    return split_module(gm, None, lambda node: pieces[node], keep_original_order=True)
