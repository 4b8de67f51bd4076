import operator

import torch


def silu_pass(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    # the targets Dynamo records: but this pass runs after AOTAutograd, on ATen ops
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target in (operator.mul, torch.mul):
            a, b = node.args
            for x, s in ((a, b), (b, a)):
                if isinstance(s, torch.fx.Node) and s.target is torch.sigmoid and s.args[0] is x:
                    with gm.graph.inserting_before(node):
                        new = gm.graph.call_function(torch.ops.aten.silu.default, (x,))
                    node.replace_all_uses_with(new)
                    gm.graph.erase_node(node)
                    gm.graph.erase_node(s)
                    break
    gm.recompile()
    return gm
