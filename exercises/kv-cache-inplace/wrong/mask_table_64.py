import torch

_BLOCK = 64                                                     # nanoGPT-style causal-mask buffer, block_size 64
_CAUSAL = torch.tril(torch.ones(_BLOCK, _BLOCK, dtype=torch.bool))


def append_and_read(cache, pos, k):
    """Correct only for caches of at most 64 slots (Tmax > 64: index error / shape mismatch)."""
    cache.index_copy_(1, pos, k)
    T = cache.shape[1]
    valid = _CAUSAL.to(cache.device).index_select(0, pos)[0, :T]   # row pos: True for slots 0..pos
    return torch.where(valid[None, :, None], cache, torch.zeros((), dtype=cache.dtype)).sum(1)
