import torch


def seq_mean(x, lengths):            # x: [B, T, D] float, lengths: [B] int64 in [0, T]
    T = x.shape[1]
    mask = torch.arange(T, device=x.device)[None, :, None] < lengths[:, None, None]
    total = (x * mask.to(x.dtype)).sum(1, keepdim=True)  # keepdim 方便和 lengths 广播
    return total / lengths[:, None, None].to(x.dtype)
