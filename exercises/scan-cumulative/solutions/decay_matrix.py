import torch


def ema(x, decay):
    # h_t = sum_{s <= t} (1 - decay) * decay^(t - s) * x_s: one [T, T, D] weight, no loop at all
    t = torch.arange(x.shape[0], device=x.device)
    lag = (t[:, None] - t[None, :]).to(x.dtype)                       # t - s
    weight = torch.where(lag[..., None] >= 0, decay ** lag.clamp(min=0)[..., None], 0.0)
    return ((1 - decay) * weight * x[None, :, :]).sum(1)
