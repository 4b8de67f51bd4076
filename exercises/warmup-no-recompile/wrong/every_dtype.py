import torch


def warmup(step_fn, d=32):
    for dtype in (torch.float32, torch.bfloat16, torch.float16):   # warm up "everything", to be safe
        for t in (512, 256, 1):
            step_fn(torch.randn(2, t, d, dtype=dtype))
