import torch


def warmup(step_fn, d=32):
    step_fn(torch.randn(2, 1, d))              # the specialised size-1 graph
    step_fn(torch.randn(2, 2, d))              # T changed: recompiled with T symbolic (T >= 2)
