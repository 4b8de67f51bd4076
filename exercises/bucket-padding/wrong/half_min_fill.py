import torch
import torch.nn.functional as F

BUCKETS = (16, 32, 64)
FILL = -65504.0  # float16 能表示的最小有限值：对 float16 也不会溢出成 -inf


def serve(core_fn, x):                         # x: [B, T, D], T in 1..64
    t = x.shape[1]
    bucket = next(b for b in BUCKETS if b >= t)
    return core_fn(F.pad(x, (0, 0, 0, bucket - t), value=FILL))
