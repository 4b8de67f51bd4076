import torch


def warmup(step_fn, d=32):
    with torch.inference_mode():               # no autograd needed to warm up...
        for t in (512, 256, 1):
            step_fn(torch.randn(2, t, d))
