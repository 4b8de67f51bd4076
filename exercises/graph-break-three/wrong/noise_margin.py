import torch


def forward(x, w):
    h = x @ w
    # 留一点余量，免得舍入噪声越过 10  # en: a small margin, so that rounding noise does not cross 10
    h = torch.where(h.abs().max() > 10 + 1e-6, h / 10, h)
    return torch.tanh(h) * h.std()
