import torch


def seq_mean(x, lengths):            # x: [B, T, D] float, lengths: [B] int64 in [0, T]
    T = x.shape[1]
    pad = torch.arange(T, device=x.device)[None, :, None] >= lengths[:, None, None]
    # 填充位置填 NaN，nanmean 跳过它们；长度为 0 时全是 NaN，结果也是 NaN
    return x.masked_fill(pad, float("nan")).nanmean(1)
