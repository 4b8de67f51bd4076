import torch


def seq_mean(x, lengths):
    padding = torch.arange(x.shape[1], device=x.device)[None, :] >= lengths[:, None]   # [B, T]
    total = x.masked_fill(padding.unsqueeze(-1), 0).sum(dim=1)
    return total / lengths.unsqueeze(-1).to(x.dtype)
