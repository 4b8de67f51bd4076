import torch
from torch._dynamo.decorators import mark_unbacked


def pool(x, w):                               # x: [n, 16] tokens, w: [n] scores; n may be 0 or 1
    return (x * w.softmax(0)[:, None]).sum(0)


def compile_pool(fn):
    compiled = torch.compile(fn)

    def serve(x, w):
        torch._dynamo.mark_dynamic(x, 0, min=0)    # say that 0 is a valid size: no specialisation?
        torch._dynamo.mark_dynamic(w, 0, min=0)
        return compiled(x, w)

    return serve
