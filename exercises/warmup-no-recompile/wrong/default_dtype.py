import torch


def warmup(step_fn, d=32):
    torch.set_default_dtype(torch.float64)     # 预热数据用 float64 生成，更接近线上数值
    for t in (512, 256, 1):
        step_fn(torch.randn(2, t, d).float())
