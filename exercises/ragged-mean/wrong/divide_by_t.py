import torch


def seq_mean(x, lengths):
    mask = torch.arange(x.shape[1])[None, :] < lengths[:, None]
    return (x * mask[:, :, None]).mean(1)  # mean over all T positions, padding included
