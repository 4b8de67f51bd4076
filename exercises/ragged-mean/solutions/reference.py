import torch


def seq_mean(x, lengths):            # x: [B, T, D] float, lengths: [B] int64 in [0, T]
    T = x.shape[1]
    # 用掩码代替切片：形状始终是 [B, T]，与 lengths 的值无关  # en: a mask instead of a slice: the shape is always [B, T], whatever the values of lengths
    keep = torch.arange(T, device=x.device)[None, :] < lengths[:, None]
    # 用 where 选出 0，而不是乘以 0：填充里的 inf 乘 0 是 NaN  # en: pick 0 with where, not a multiply by 0: an inf in the padding times 0 is NaN
    total = torch.where(keep[:, :, None], x, torch.zeros((), dtype=x.dtype)).sum(1)
    return total / lengths[:, None].to(x.dtype)  # 长度为 0 时 0 / 0 = NaN，与原来的空 mean 一致  # en: for a length of 0, 0 / 0 = NaN, as the empty mean was before
