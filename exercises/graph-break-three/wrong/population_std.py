import torch


def forward(x, w):
    h = x @ w
    h = torch.where(h.abs().max() > 10, h / 10, h)
    scale = ((h - h.mean()) ** 2).mean().sqrt()  # 标准差：偏差平方的均值再开方
    return torch.tanh(h) * scale
