import torch


def append_and_read(cache, pos, k):
    p = int(pos)
    cache[:, p:p + 1] = k                      # a slice compiles, but p is a data-dependent size
    valid = torch.arange(cache.shape[1]) <= p
    return (cache * valid[None, :, None]).sum(1)
