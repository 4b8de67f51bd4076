import torch
from torch.fx.passes.split_module import split_module

SPLITTING_OPS = {"practice.attention", "practice.attention.default"}   # like an engine's splitting_ops list


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    ids, current = {}, 0
    for node in gm.graph.nodes:
        if node.op == "call_function" and str(node.target) in SPLITTING_OPS:
            ids[node.name] = current + 1
            current += 2
        elif node.op not in ("placeholder", "output"):
            ids[node.name] = current
    return split_module(gm, gm, lambda node: ids[node.name])
