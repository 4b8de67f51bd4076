import torch


def forward(x, w):
    print("forward called")  # the break on the first line that explain() does not report
    h = x @ w
    h = torch.where(h.abs().max() > 10, h / 10, h)
    return torch.tanh(h) * h.std()
