import torch


def warmup(step_fn, d=32):
    # 1st call: compiled for T = 512 only. 2nd call: T changed, so Dynamo recompiles with T symbolic,
    # valid for every T >= 2. Sizes 0 and 1 are always specialised, so T = 1 needs a graph of its own.
    for t in (512, 256, 1):
        step_fn(torch.randn(2, t, d))
