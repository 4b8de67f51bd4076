import torch


def attend(q, k, v, length):
    scores = (k @ q.unsqueeze(-1)).squeeze(-1) / k.shape[-1] ** 0.5
    positions = torch.arange(k.shape[1], device=q.device)
    scores = scores.masked_fill(positions[None, :] >= length[:, None], 0.0)   # 0 is not "no weight"
    return (scores.softmax(-1).unsqueeze(-1) * v).sum(1)
