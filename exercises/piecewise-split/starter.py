import torch


def split_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    return gm                                   # TODO: isolate every practice.attention call
