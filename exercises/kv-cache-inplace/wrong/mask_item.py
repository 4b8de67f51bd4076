import torch


def append_and_read(cache, pos, k):
    cache.index_copy_(1, pos, k)
    valid = torch.arange(cache.shape[1]) <= pos.item()   # the write is fine, the mask still syncs
    return (cache * valid[None, :, None]).sum(1)
