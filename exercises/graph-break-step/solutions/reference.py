import torch


def step(x, w):
    h = x @ w
    h = torch.where(h.sum() > 0, h * 2, h)  # 条件是一个 0 维张量，留在图里  # en: the condition is a 0-d tensor and stays in the graph
    return torch.relu(h)
