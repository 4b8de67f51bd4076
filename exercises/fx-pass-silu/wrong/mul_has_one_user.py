import torch

aten = torch.ops.aten


def silu_pass(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.mul.Tensor:
            continue
        # 「只有这一个用户」：检查 mul 的结果只被用一次
        if len(node.users) != 1:
            continue
        a, b = node.args[0], node.args[1]
        for x, s in ((a, b), (b, a)):
            if isinstance(s, torch.fx.Node) and s.target is aten.sigmoid.default and s.args[0] is x:
                with graph.inserting_before(node):
                    silu = graph.call_function(aten.silu.default, (x,))
                node.replace_all_uses_with(silu)
                graph.erase_node(node)
                break
    graph.eliminate_dead_code()
    gm.recompile()
    return gm
