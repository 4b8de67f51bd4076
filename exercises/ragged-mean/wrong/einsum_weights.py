import torch


def seq_mean(x, lengths):
    T = x.shape[1]
    weights = (torch.arange(T, device=x.device) < lengths[:, None]).to(x.dtype)  # [B, T] of 0/1
    return torch.einsum("btd,bt->bd", x, weights) / lengths[:, None]
