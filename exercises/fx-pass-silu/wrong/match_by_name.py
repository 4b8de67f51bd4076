import torch

aten = torch.ops.aten


def silu_pass(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = gm.graph
    for node in list(graph.nodes):
        # AOTAutograd 图里的节点名就是算子名：mul、mul_1、sigmoid、sigmoid_1……
        if node.op != "call_function" or not node.name.startswith("mul"):
            continue
        a, b = node.args[0], node.args[1]
        for x, s in ((a, b), (b, a)):
            if (isinstance(s, torch.fx.Node) and s.name.startswith("sigmoid") and s.args[0] is x
                    and len(s.users) == 1):
                with graph.inserting_before(node):
                    silu = graph.call_function(aten.silu.default, (x,))
                node.replace_all_uses_with(silu)
                graph.erase_node(node)
                graph.erase_node(s)
                break
    gm.recompile()
    return gm
