import torch
import torch.nn.functional as F


def core(x):
    return (x.softmax(1) * x).sum(1)


def serve(core_fn, x):
    t = x.shape[1]
    bucket = 1 << (t - 1).bit_length()                  # 1, 2, 4, ..., 64: seven buckets
    return core_fn(F.pad(x, (0, 0, 0, bucket - t), value=torch.finfo(x.dtype).min))
