import torch


def ema(x, decay):
    h = torch.zeros_like(x[0])
    out = []
    torch._dynamo.graph_break()                # let Dynamo stop before the loop: no unrolling
    for t in range(x.shape[0]):
        h = decay * h + (1 - decay) * x[t]
        out.append(h)
    return torch.stack(out)
