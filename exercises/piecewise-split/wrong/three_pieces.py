import torch
from torch.fx.passes.split_module import split_module


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    # 注意力之前是第 0 段，注意力是第 1 段，之后是第 2 段
    seen, pieces = False, {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if node.op == "call_function" and node.target in (torch.ops.practice.attention,
                                                          torch.ops.practice.attention.default):
            pieces[node] = 1
            seen = True
        else:
            pieces[node] = 2 if seen else 0
    return split_module(gm, None, lambda node: pieces[node], keep_original_order=True)
