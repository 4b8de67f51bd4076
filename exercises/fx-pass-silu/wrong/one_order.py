import torch

aten = torch.ops.aten


def silu_pass(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not aten.mul.Tensor:
            continue
        x, s = node.args                           # only mul(x, sigmoid(x))
        if (isinstance(s, torch.fx.Node) and s.target is aten.sigmoid.default and s.args[0] is x
                and len(s.users) == 1):
            with gm.graph.inserting_before(node):
                new = gm.graph.call_function(aten.silu.default, (x,))
            node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
            gm.graph.erase_node(s)
    gm.recompile()
    return gm
