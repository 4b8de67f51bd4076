import torch
from torch._dynamo.decorators import mark_unbacked


def pool(x, w):                               # x: [n, 16] tokens, w: [n] scores; n may be 0 or 1
    return (x * w.softmax(0)[:, None]).sum(0)


def compile_pool(fn):
    return torch.compile(fn, dynamic=False)        # static graphs: no symbolic sizes to go wrong
