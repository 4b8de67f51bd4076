import torch

aten = torch.ops.aten


def silu_pass(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not aten.mul.Tensor:
            continue
        a, b = node.args
        for x, s in ((a, b), (b, a)):
            if isinstance(s, torch.fx.Node) and s.target is aten.sigmoid.default and s.args[0] is x:
                with gm.graph.inserting_before(node):
                    new = gm.graph.call_function(aten.silu.default, (x,))
                node.replace_all_uses_with(new)
                gm.graph.erase_node(node)
                break
    gm.graph.eliminate_dead_code()                  # drops the sigmoids nobody uses any more
    gm.recompile()
    return gm
