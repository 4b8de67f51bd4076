import torch


def append_and_read(cache, pos, k):            # cache [B, Tmax, D]; pos: int64 tensor shape [1]; k [B, 1, D]
    # The position stays a tensor: index_copy_ writes k into slot `pos` of dim 1, in the caller's storage.
    # AOTAutograd functionalizes the mutation and copies the result back into the input after the graph.
    cache.index_copy_(1, pos, k)
    valid = torch.arange(cache.shape[1]) <= pos    # [Tmax] bool, compared against the tensor
    return (cache * valid[None, :, None]).sum(1)
