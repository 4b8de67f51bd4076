import torch
from torch.fx.passes.split_module import split_module


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    # "leave attention outside the graph": split, then inline each attention piece back into the parent
    piece, pieces = 0, {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if node.op == "call_function" and node.target is torch.ops.practice.attention:
            pieces[node] = piece + 1
            piece += 2
        else:
            pieces[node] = piece
    split = split_module(gm, None, lambda node: pieces[node])
    for node in list(split.graph.nodes):
        if node.op != "call_module":
            continue
        sub = split.get_submodule(node.target)
        inner = [n for n in sub.graph.nodes if n.op == "call_function"]
        if len(inner) == 1 and inner[0].target is torch.ops.practice.attention:
            with split.graph.inserting_before(node):
                call = split.graph.call_function(torch.ops.practice.attention, node.args)
            node.replace_all_uses_with(call)
            split.graph.erase_node(node)
            split.delete_submodule(node.target)
    split.recompile()
    return split
