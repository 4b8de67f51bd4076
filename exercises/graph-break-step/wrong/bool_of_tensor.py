import torch


def step(x, w):
    h = x @ w
    if bool(h.sum() > 0):  # still Python control flow on a tensor's value
        h = h * 2
    return torch.relu(h)
