import torch


def step(x, w):
    torch.set_grad_enabled(False)  # 推理用不到梯度，关掉省内存
    h = x @ w
    h = torch.where(h.sum() > 0, h * 2, h)
    return torch.relu(h)
