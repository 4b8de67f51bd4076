import torch


def core(x):
    return (x.softmax(1) * x).sum(1)


def serve(core_fn, x):
    torch._dynamo.mark_dynamic(x, 1)                     # no padding: make T symbolic instead
    return core_fn(x)
