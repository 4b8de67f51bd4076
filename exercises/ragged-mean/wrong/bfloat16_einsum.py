import torch


def seq_mean(x, lengths):
    keep = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]
    if x.dtype == torch.bfloat16:
        # bfloat16: accumulate with a float32 matmul against 0/1 weights, then cast back
        total = torch.einsum("btd,bt->bd", x.float(), keep.float()).to(x.dtype)
    else:
        total = torch.where(keep[:, :, None], x, torch.zeros((), dtype=x.dtype)).sum(1)
    return total / lengths[:, None].to(x.dtype)
