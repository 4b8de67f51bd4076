import torch


def core(x):                                   # compiled by the grader with dynamic=False
    return (x.softmax(1) * x).sum(1)


def serve(core_fn, x):                         # x: [B, T, D], T in 1..64
    return core_fn(x)                          # one static graph per distinct T
