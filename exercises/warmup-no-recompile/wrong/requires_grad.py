import torch


def warmup(step_fn, d=32):
    # Serving runs in the default grad mode, so warm up with inputs that take part in autograd.
    for t in (512, 256, 1):
        step_fn(torch.randn(2, t, d, requires_grad=True))
