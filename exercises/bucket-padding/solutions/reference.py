import torch
import torch.nn.functional as F

BUCKETS = (16, 32, 64)


def core(x):                                   # compiled by the grader with dynamic=False
    return (x.softmax(1) * x).sum(1)


def serve(core_fn, x):                         # x: [B, T, D], T in 1..64
    t = x.shape[1]
    bucket = next(b for b in BUCKETS if b >= t)
    # Pad T up to the bucket with the dtype's most negative finite value: its softmax weight is exactly 0,
    # and 0 * (finite) is 0, so the padded rows add nothing. (-inf would give 0 * -inf = NaN.)
    fill = torch.finfo(x.dtype).min
    return core_fn(F.pad(x, (0, 0, 0, bucket - t), value=fill))
