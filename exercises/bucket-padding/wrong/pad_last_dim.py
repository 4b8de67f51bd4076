import torch
import torch.nn.functional as F


def core(x):
    return (x.softmax(1) * x).sum(1)


def serve(core_fn, x):
    t = x.shape[1]
    bucket = 16 if t <= 16 else 32 if t <= 32 else 64
    return core_fn(F.pad(x, (0, bucket - t), value=torch.finfo(x.dtype).min))   # F.pad starts at the LAST dim
