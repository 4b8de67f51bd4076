import torch


def warmup(step_fn, d=32):
    for t in (512, 256):                       # T becomes dynamic, but only for T >= 2
        step_fn(torch.randn(2, t, d))
