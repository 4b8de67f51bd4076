import torch
from torch._dynamo.decorators import mark_unbacked


def pool(x, w):                               # x: [n, 16] tokens, w: [n] scores; n may be 0 or 1
    return (x * w.softmax(0)[:, None]).sum(0)


def compile_pool(fn):
    compiled = torch.compile(fn)

    def serve(x, w):
        # 有 backed 的大小时，Dynamo 用真实值推理，n = 0 和 n = 1 总会被特化；unbacked 的大小没有真实值，一张图覆盖所有 n  # en: a backed size is reasoned about with its real value, so n = 0 and n = 1 are always specialised; an unbacked size has none, and one graph covers every n
        # 两个输入都要标：只标 x，w 的大小仍是 backed 的，guard 照样失败；shape_id 说明它们是同一个 n  # en: mark both inputs: with x alone, the size of w is still backed and its guard still fails; shape_id says they are the same n
        mark_unbacked(x, 0, shape_id="tokens")
        mark_unbacked(w, 0, shape_id="tokens")
        return compiled(x, w)

    return serve
