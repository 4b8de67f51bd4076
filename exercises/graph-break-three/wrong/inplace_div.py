import torch


def forward(x, w):
    h = x @ w
    big = h.abs().max() > 10
    h = torch.where(big, h.div_(10), h)  # 原地除，省一次拷贝
    return torch.tanh(h) * h.std()
