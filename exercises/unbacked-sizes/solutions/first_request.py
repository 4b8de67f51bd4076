import torch
from torch._dynamo.decorators import mark_unbacked


def pool(x, w):                               # x: [n, 16] tokens, w: [n] scores; n may be 0 or 1
    return (x * w.softmax(0)[:, None]).sum(0)


def compile_pool(fn):
    compiled = torch.compile(fn)
    first = [True]

    def serve(x, w):
        if first[0]:                               # the first compile is the only one: its sizes stay unbacked
            mark_unbacked(x, 0)
            mark_unbacked(w, 0)
            first[0] = False
        return compiled(x, w)

    return serve
