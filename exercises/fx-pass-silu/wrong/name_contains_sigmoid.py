# ATTACK: recognises the sigmoid as "'sigmoid' in str(target)": x * hardsigmoid(x) (hardswish) becomes silu
import torch
import torch.fx


def silu_pass(gm):
    g = gm.graph
    for mul in list(g.nodes):
        if mul.op != "call_function" or "mul" not in str(mul.target):
            continue
        a, b = mul.args[:2]
        for x, s in ((a, b), (b, a)):
            if (isinstance(s, torch.fx.Node) and "sigmoid" in str(s.target)
                    and s.args[0] is x and len(s.users) == 1):
                with g.inserting_before(mul):
                    n = g.call_function(torch.ops.aten.silu.default, (x,))
                mul.replace_all_uses_with(n)
                g.erase_node(mul)
                g.erase_node(s)
                break
    gm.recompile()
    return gm
