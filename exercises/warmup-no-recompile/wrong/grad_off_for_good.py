import torch


def warmup(step_fn, d=32):
    torch.set_grad_enabled(False)              # 预热不需要 autograd，关掉省内存
    for t in (512, 256, 1):
        step_fn(torch.randn(2, t, d))
