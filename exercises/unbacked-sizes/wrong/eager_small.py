import torch
from torch._dynamo.decorators import mark_unbacked


def pool(x, w):                               # x: [n, 16] tokens, w: [n] scores; n may be 0 or 1
    return (x * w.softmax(0)[:, None]).sum(0)


def compile_pool(fn):
    compiled = torch.compile(fn)

    def serve(x, w):
        if x.shape[0] < 2:
            return fn(x, w)                        # 0 and 1 are specialised anyway: serve them eagerly
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(w, 0)
        return compiled(x, w)

    return serve
