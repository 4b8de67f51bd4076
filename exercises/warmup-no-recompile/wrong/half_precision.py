import torch


def warmup(step_fn, d=32):
    # The warm-up only needs the shapes: half-precision inputs are cheaper to make and to run.
    for t in (512, 256, 1):
        step_fn(torch.randn(2, t, d, dtype=torch.float16))
