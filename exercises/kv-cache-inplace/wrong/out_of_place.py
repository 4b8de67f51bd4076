import torch


def append_and_read(cache, pos, k):
    cache = cache.index_copy(1, pos, k)        # a new tensor: the caller's cache never changes
    valid = torch.arange(cache.shape[1]) <= pos
    return (cache * valid[None, :, None]).sum(1)
