import torch
import torch.nn.functional as F

MAX_T = 256


def ema(x, decay):
    # one static loop for every T: pad to the longest length (256 covers every T served), unroll once, keep the first T rows
    padded = F.pad(x, (0, 0, 0, MAX_T - x.shape[0]))
    h = torch.zeros_like(x[0])
    out = []
    for t in range(MAX_T):
        h = decay * h + (1 - decay) * padded[t]
        out.append(h)
    return torch.stack(out)[: x.shape[0]]
