import torch


def append_and_read(cache, pos, k):
    slots = torch.arange(cache.shape[1])
    cache.copy_(torch.where((slots == pos)[None, :, None], k, cache))   # rewrite the whole cache in place
    return (cache * (slots <= pos)[None, :, None]).sum(1)
