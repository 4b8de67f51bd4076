import torch


def silu_pass(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    return gm                                   # TODO
