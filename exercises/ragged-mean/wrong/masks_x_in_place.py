import torch


def seq_mean(x, lengths):            # x: [B, T, D] float, lengths: [B] int64 in [0, T]
    T = x.shape[1]
    mask = torch.arange(T, device=x.device)[None, :] < lengths[:, None]
    x.mul_(mask[:, :, None].to(x.dtype))  # 原地把填充位置清零，省一块 [B, T, D] 的内存
    return x.sum(1) / lengths[:, None].to(x.dtype)
