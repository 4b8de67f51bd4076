import torch
import torch.nn.functional as F

BUCKETS = (16, 32, 64)


def core(x):                                   # compiled by the grader with dynamic=False
    return (x.softmax(1) * x).sum(1)


def serve(core_fn, x):                         # x: [B, T, D], T in 1..64
    t = x.shape[1]
    bucket = next(b for b in BUCKETS if b > t)             # a bucket with room past t
    return core_fn(F.pad(x, (0, 0, 0, bucket - t), value=torch.finfo(x.dtype).min))
