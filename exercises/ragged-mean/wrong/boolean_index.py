import torch


def seq_mean(x, lengths):
    B, T, D = x.shape
    mask = torch.arange(T)[None, :] < lengths[:, None]
    rows = x[mask]                                           # [N, D]: N depends on the values of lengths
    seq = torch.arange(B).repeat_interleave(lengths)         # which sequence each row belongs to
    total = torch.zeros(B, D, dtype=x.dtype).index_add(0, seq, rows)
    return total / lengths[:, None]
