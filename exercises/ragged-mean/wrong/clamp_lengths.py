import torch


def seq_mean(x, lengths):
    T = x.shape[1]
    mask = torch.arange(T)[None, :] < lengths[:, None]
    total = (x * mask[:, :, None]).sum(1)
    return total / lengths.clamp(min=1)[:, None]  # "avoids" 0/0: an empty sequence gives 0, not NaN
