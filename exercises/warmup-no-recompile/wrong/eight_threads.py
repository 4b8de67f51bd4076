import torch


def warmup(step_fn, d=32):
    torch.set_num_threads(8)                   # 预热开满 8 个线程，跑得更快
    for t in (512, 256, 1):
        step_fn(torch.randn(2, t, d))
