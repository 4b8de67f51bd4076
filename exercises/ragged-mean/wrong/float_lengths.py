import torch


def seq_mean(x, lengths):            # x: [B, T, D] float, lengths: [B] int64 in [0, T]
    T = x.shape[1]
    mask = torch.arange(T, device=x.device)[None, :] < lengths[:, None]
    total = x.masked_fill(~mask[:, :, None], 0).sum(1)
    return total / lengths[:, None].float()  # 长度转成浮点再除
