import torch


def forward(x, w):
    torch.set_float32_matmul_precision("medium")  # 允许更快的矩阵乘
    h = x @ w
    h = torch.where(h.abs().max() > 10, h / 10, h)
    return torch.tanh(h) * h.std()
