import torch


def attend(q, k, v, length):
    scores = torch.einsum("bld,bd->bl", k, q) * k.shape[-1] ** -0.5
    valid = torch.arange(k.shape[1], device=k.device) < length.unsqueeze(-1)   # [B, L], made on the GPU
    scores = torch.where(valid, scores, torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1)
    return torch.einsum("bl,bld->bd", weights, v)
