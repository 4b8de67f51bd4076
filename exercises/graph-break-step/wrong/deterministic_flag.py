import torch


def step(x, w):
    # 让 h.sum() 每次的舍入都一样，符号判断才可复现
    torch.use_deterministic_algorithms(True)
    h = x @ w
    h = torch.where(h.sum() > 0, h * 2, h)
    return torch.relu(h)
