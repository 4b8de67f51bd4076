import torch
from torch._dynamo.decorators import mark_unbacked


def pool(x, w):                               # x: [n, 16] tokens, w: [n] scores; n may be 0 or 1
    return (x * w.softmax(0)[:, None]).sum(0)


def compile_pool(fn):
    compiled = torch.compile(fn)

    def serve(x, w):
        # pad two tokens with weight -inf (softmax gives them 0): n + 2 >= 2 is never specialised
        x = torch.cat([x, x.new_zeros(2, x.shape[1])])
        w = torch.cat([w, w.new_full((2,), float("-inf"))])
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(w, 0)
        return compiled(x, w)

    return serve
