import torch


def ema(x, decay):                            # x: [T, D], decay: [D] in (0, 1) -> [T, D]
    h = torch.zeros_like(x[0])
    out = []
    for t in range(x.shape[0]):               # unrolled by Dynamo: T copies, and T is baked in
        h = decay * h + (1 - decay) * x[t]
        out.append(h)
    return torch.stack(out)
