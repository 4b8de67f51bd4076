import torch


def ema(x, decay):
    h = torch.zeros_like(x[0])
    out = []
    for x_t in x.unbind(0):                    # iterate the rows themselves, no range(T)
        h = decay * h + (1 - decay) * x_t
        out.append(h)
    return torch.stack(out)
