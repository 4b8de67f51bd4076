import torch
import torch.nn.functional as F
from torch.fx.passes.split_module import split_module


def is_attention(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and node.target in (torch.ops.practice.attention,
                                                          torch.ops.practice.attention.default)


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    # "keep the attention kernel in its own piece, but let the compiled piece after it recompute attention with
    # SDPA so that Inductor can fuse it": the op still runs, alone in its piece, and its result goes nowhere
    for node in list(gm.graph.nodes):
        if is_attention(node):
            with gm.graph.inserting_after(node):
                fused = gm.graph.call_function(F.scaled_dot_product_attention, node.args, {"is_causal": True})
            node.replace_all_uses_with(fused)
    gm.recompile()
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
    return split_module(gm, None, lambda node: pieces[node], keep_original_order=True)
