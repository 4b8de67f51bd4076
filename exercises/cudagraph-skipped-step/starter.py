import torch


def attend(q, k, v, length):
    # q: [B, D]; k, v: [B, L, D], a fixed-size KV cache; length: [B] int64, how many cache entries each row uses
    scores = (k @ q.unsqueeze(-1)).squeeze(-1) / k.shape[-1] ** 0.5        # [B, L]
    positions = torch.arange(k.shape[1])                                    # on the CPU (no device=)...
    mask = (positions[None, :] >= length.cpu()[:, None]).to(q.device)       # ...so the mask is built there too
    scores = scores.masked_fill(mask, float("-inf"))
    return (scores.softmax(-1).unsqueeze(-1) * v).sum(1)                   # [B, D]
