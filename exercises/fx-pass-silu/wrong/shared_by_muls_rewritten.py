# ATTACK: a sigmoid with several users is rewritten as long as every user is a mul by its input
# (contract: rewrite only when the sigmoid has no user but this mul)
import torch
import torch.fx

S, M = torch.ops.aten.sigmoid.default, torch.ops.aten.mul.Tensor


def silu_pass(gm):
    g = gm.graph
    for s in list(g.nodes):
        if s.target != S:
            continue
        x = s.args[0]
        users = list(s.users)
        if not users or not all(u.target == M and set(u.args) == {x, s} for u in users):
            continue
        for mul in users:
            with g.inserting_before(mul):
                n = g.call_function(torch.ops.aten.silu.default, (x,))
            mul.replace_all_uses_with(n)
            g.erase_node(mul)
        g.erase_node(s)
    gm.recompile()
    return gm
