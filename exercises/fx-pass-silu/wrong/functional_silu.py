import torch
import torch.nn.functional as F

aten = torch.ops.aten


def silu_pass(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not aten.mul.Tensor:
            continue
        a, b = node.args
        for x, s in ((a, b), (b, a)):
            if (isinstance(s, torch.fx.Node) and s.target is aten.sigmoid.default and s.args[0] is x
                    and len(s.users) == 1):
                with gm.graph.inserting_before(node):
                    new = gm.graph.call_function(F.silu, (x,))   # a Python function, not an ATen op
                node.replace_all_uses_with(new)
                gm.graph.erase_node(node)
                gm.graph.erase_node(s)
                break
    gm.recompile()
    return gm
