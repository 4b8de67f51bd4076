import torch
from torch._dynamo.decorators import mark_unbacked


def pool(x, w):                               # x: [n, 16] tokens, w: [n] scores; n may be 0 or 1
    return (x * w.softmax(0)[:, None]).sum(0)


def compile_pool(fn):
    compiled = torch.compile(fn)

    def serve(x, w):
        # 请求最多 33 个 token：给 unbacked 的大小一个上界，编译器知道得越多越好  # en: requests have at most 33 tokens: give the unbacked size an upper bound, the more the compiler knows the better
        mark_unbacked(x, 0, shape_id="tokens", max=33)
        mark_unbacked(w, 0, shape_id="tokens", max=33)
        return compiled(x, w)

    return serve
