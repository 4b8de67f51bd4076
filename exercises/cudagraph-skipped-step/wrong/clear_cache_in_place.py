import torch


def attend(q, k, v, length):
    positions = torch.arange(k.shape[1], device=q.device)
    valid = positions[None, :] < length[:, None]                            # [B, L]
    k.masked_fill_(~valid[..., None], 0.0)       # clears the stale cache entries in place: an input changes
    scores = (k @ q.unsqueeze(-1)).squeeze(-1) / k.shape[-1] ** 0.5
    scores = scores.masked_fill(~valid, float("-inf"))
    return (scores.softmax(-1).unsqueeze(-1) * v).sum(1)
