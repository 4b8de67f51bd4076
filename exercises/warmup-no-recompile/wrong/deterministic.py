import torch


def warmup(step_fn, d=32):
    torch.use_deterministic_algorithms(True)   # 预热时固定算法，编译出的图可复现
    for t in (512, 256, 1):
        step_fn(torch.randn(2, t, d))
