import torch


def append_and_read(cache, pos, k):
    cache[:, pos[0]] = k[:, 0]                 # pos[0] is a 0-dim tensor, used as an integer index
    valid = torch.arange(cache.shape[1]) <= pos
    return (cache * valid[None, :, None]).sum(1)
