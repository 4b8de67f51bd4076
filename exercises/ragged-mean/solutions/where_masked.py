import torch


def seq_mean(x, lengths):
    positions = torch.arange(x.shape[1], device=x.device)
    keep = (positions[None, :] < lengths[:, None])[..., None]   # [B, T, 1]
    total = torch.where(keep, x, torch.zeros((), dtype=x.dtype)).sum(1)
    return total / lengths.to(x.dtype).unsqueeze(1)
