import torch

aten = torch.ops.aten


def _silu_input(mul):
    """The x of mul(x, sigmoid(x)) or mul(sigmoid(x), x), when x and its sigmoid feed nothing else; else None."""
    a, b = mul.args[0], mul.args[1]
    for x, s in ((a, b), (b, a)):
        if (isinstance(s, torch.fx.Node) and s.op == "call_function" and s.target is aten.sigmoid.default
                and s.args[0] is x and len(s.users) == 1
                and len(x.users) == 2):                  # x 只喂给 sigmoid 和这个 mul：这才是一个独立的 SiLU
            return x, s
    return None


def silu_pass(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.mul.Tensor:
            continue
        found = _silu_input(node)
        if found is None:
            continue
        x, sigmoid = found
        with graph.inserting_before(node):
            silu = graph.call_function(aten.silu.default, (x,))
        silu.meta.update(node.meta)            # keep the fake tensor value for later passes
        node.replace_all_uses_with(silu)
        graph.erase_node(node)
        graph.erase_node(sigmoid)
    graph.lint()
    gm.recompile()                             # regenerate gm.forward from the edited graph
    return gm
