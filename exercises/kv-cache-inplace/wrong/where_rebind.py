import torch


def append_and_read(cache, pos, k):
    slots = torch.arange(cache.shape[1])
    cache = torch.where((slots == pos)[None, :, None], k, cache)        # rebinds the name only
    return (cache * (slots <= pos)[None, :, None]).sum(1)
