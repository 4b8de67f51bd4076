import torch


def attend(q, k, v, length):
    scores = (k @ q.unsqueeze(-1)).squeeze(-1) / k.shape[-1] ** 0.5
    # 直接在 GPU 上生成位置：图里不再有 CPU 上的张量，也没有 CPU 与 GPU 之间的拷贝，  # en: make the positions on the GPU: no CPU tensor is left in the graph, and no copy between CPU and GPU,
    # 整步都能录进一张 CUDA Graph  # en: so the whole step can be recorded into one CUDA Graph
    positions = torch.arange(k.shape[1], device=q.device)
    scores = scores.masked_fill(positions[None, :] >= length[:, None], float("-inf"))
    return (scores.softmax(-1).unsqueeze(-1) * v).sum(1)
