import torch


def seq_mean(x, lengths):            # x: [B, T, D] float, lengths: [B] int64 in [0, T]
    T = x.shape[1]
    mask = torch.arange(T, device=x.device)[None, :] < lengths[:, None]
    # 累加用 float32 更准；float64 输入保持 float64
    acc = torch.promote_types(x.dtype, torch.float32)
    total = torch.where(mask[:, :, None], x.to(acc), 0).sum(1)
    return total / lengths[:, None].to(acc)
