import torch


def ema(x, decay):
    # a running average without the loop: the mean of the rows so far
    steps = torch.arange(1, x.shape[0] + 1, device=x.device, dtype=x.dtype)[:, None]
    return torch.cumsum(x, 0) / steps
