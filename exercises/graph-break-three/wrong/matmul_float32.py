import torch


def forward(x, w):
    h = x.float() @ w.float()  # 矩阵乘用 float32 算，快得多
    h = torch.where(h.abs().max() > 10, h / 10, h)
    return torch.tanh(h) * h.std()
