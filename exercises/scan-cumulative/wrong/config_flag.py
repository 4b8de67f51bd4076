import torch

torch._dynamo.config.specialize_int = True     # make the length a plain int


def ema(x, decay):
    h = torch.zeros_like(x[0])
    out = []
    for t in range(x.shape[0]):
        h = decay * h + (1 - decay) * x[t]
        out.append(h)
    return torch.stack(out)
