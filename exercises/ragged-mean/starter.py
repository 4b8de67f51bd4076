import torch


def seq_mean(x, lengths):            # x: [B, T, D] float, lengths: [B] int64 in [0, T]
    outs = []
    for b in range(x.shape[0]):
        L = int(lengths[b])           # .item(): data-dependent shape below
        outs.append(x[b, :L].mean(0))
    return torch.stack(outs)
