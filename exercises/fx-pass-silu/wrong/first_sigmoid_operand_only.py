# ATTACK: if/elif: when the first operand is a sigmoid that does not match, the other order is never tried
# (sigmoid(y) * sigmoid(sigmoid(y)) keeps its pattern)
import torch
import torch.fx

S = torch.ops.aten.sigmoid.default


def silu_pass(gm):
    g = gm.graph
    for mul in list(g.nodes):
        if mul.op != "call_function" or mul.target != torch.ops.aten.mul.Tensor:
            continue
        a, b = mul.args
        if isinstance(a, torch.fx.Node) and a.target == S:
            x, s = b, a
        elif isinstance(b, torch.fx.Node) and b.target == S:
            x, s = a, b
        else:
            continue
        if s.args[0] is x and len(s.users) == 1:
            with g.inserting_before(mul):
                n = g.call_function(torch.ops.aten.silu.default, (x,))
            mul.replace_all_uses_with(n)
            g.erase_node(mul)
            g.erase_node(s)
    gm.recompile()
    return gm
