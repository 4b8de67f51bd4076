import torch

BUCKETS = (16, 32, 64)


def core(x):                                   # compiled by the grader with dynamic=False
    return (x.softmax(1) * x).sum(1)


def serve(core_fn, x):                         # x: [B, T, D], T in 1..64
    b, t, d = x.shape
    bucket = next(s for s in BUCKETS if s >= t)
    pad = torch.full((b, bucket - t, d), torch.finfo(x.dtype).min)   # the rows to append
    return core_fn(torch.cat([x, pad], dim=1))
