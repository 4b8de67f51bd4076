import torch


def attend(q, k, v, length):
    q.mul_(k.shape[-1] ** -0.5)                 # scales q in place to save a buffer: the caller's q changes
    scores = (k @ q.unsqueeze(-1)).squeeze(-1)
    positions = torch.arange(k.shape[1], device=q.device)
    scores = scores.masked_fill(positions[None, :] >= length[:, None], float("-inf"))
    return (scores.softmax(-1).unsqueeze(-1) * v).sum(1)
