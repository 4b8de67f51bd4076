import torch


def seq_mean(x, lengths):            # x: [B, T, D] float, lengths: [B] int64 in [0, T]
    # 前缀和：第 L 个位置之前的和就是 csum[:, L - 1]
    csum = x.cumsum(1)
    idx = (lengths - 1).clamp(min=0)[:, None, None].expand(-1, 1, x.shape[2])
    total = csum.gather(1, idx).squeeze(1)
    return total / lengths[:, None].to(x.dtype)
