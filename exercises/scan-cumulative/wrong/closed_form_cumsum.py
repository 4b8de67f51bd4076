import torch


def ema(x, decay):
    # h_t = (1 - d) * d^t * sum_{s <= t} d^(-s) * x_s: one cumsum, no loop
    t = torch.arange(x.shape[0], device=x.device, dtype=x.dtype)[:, None]
    return (1 - decay) * decay ** t * torch.cumsum(decay ** -t * x, 0)
