# "the opaque op is the one called through torch.ops": splits at every torch.ops call
import torch
from torch.fx.passes.split_module import split_module


def split_graph(gm):
    ids, cur = {}, 0
    for n in gm.graph.nodes:
        if n.op == "call_function" and isinstance(n.target, (torch._ops.OpOverloadPacket, torch._ops.OpOverload)):
            cur += 1; ids[n] = cur; cur += 1
        else:
            ids[n] = cur
    return split_module(gm, None, lambda n: ids[n])
