import torch


def append_and_read(cache, pos, k):            # cache [B, Tmax, D]; pos: int64 tensor shape [1]; k [B, 1, D]
    cache.index_copy_(1, pos, k)
    # Slots after pos hold stale data: clear them, then the whole cache can be summed.
    stale = torch.arange(cache.shape[1]) > pos
    cache.masked_fill_(stale[None, :, None], 0)
    return cache.sum(1)
