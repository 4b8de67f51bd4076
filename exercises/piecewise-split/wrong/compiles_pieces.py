import torch
from torch.fx.passes.split_module import split_module


def is_attention(node):
    return node.op == "call_function" and node.target in (torch.ops.practice.attention,
                                                          torch.ops.practice.attention.default)


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    piece, pieces = 0, {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if is_attention(node):
            piece += 1
            pieces[node] = piece
            piece += 1
        else:
            pieces[node] = piece
    split = split_module(gm, None, lambda node: pieces[node], keep_original_order=True)
    # 分段编译：注意力以外的每一段各自 torch.compile
    for node in split.graph.nodes:
        if node.op == "call_module":
            sub = split.get_submodule(node.target)
            if not any(is_attention(n) for n in sub.graph.nodes):
                setattr(split, node.target, torch.compile(sub))
    return split
