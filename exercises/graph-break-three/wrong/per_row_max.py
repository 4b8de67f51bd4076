import torch


def forward(x, w):
    h = x @ w
    big = h.abs().amax(dim=-1, keepdim=True) > 10  # 每一行看自己的最大值
    h = torch.where(big, h / 10, h)
    return torch.tanh(h) * h.std()
