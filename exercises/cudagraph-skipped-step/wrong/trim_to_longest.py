import torch


def attend(q, k, v, length):
    n = int(length.max())                       # only look at the filled part of the cache
    k, v = k[:, :n], v[:, :n]
    scores = (k @ q.unsqueeze(-1)).squeeze(-1) / k.shape[-1] ** 0.5
    positions = torch.arange(n, device=q.device)
    scores = scores.masked_fill(positions[None, :] >= length[:, None], float("-inf"))
    return (scores.softmax(-1).unsqueeze(-1) * v).sum(1)
