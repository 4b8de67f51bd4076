import torch


def step(x, w):
    h = x @ w
    if h.sum().item() > 0:  # 依赖数据的 Python 控制流  # en: Python control flow that depends on data
        h = h * 2
    return torch.relu(h)
