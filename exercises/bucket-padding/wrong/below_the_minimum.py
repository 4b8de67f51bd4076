import torch
import torch.nn.functional as F


def core(x):
    return (x.softmax(1) * x).sum(1)


def serve(core_fn, x):
    t = x.shape[1]
    bucket = 16 if t <= 16 else (32 if t <= 32 else 64)
    fill = x.amin() - 1000          # "well below the smallest input": exp(-1000) is 0 in every dtype
    pad = fill.expand(x.shape[0], bucket - t, x.shape[2])
    return core_fn(torch.cat([x, pad], dim=1))
