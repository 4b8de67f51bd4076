import torch


def step(x, w):
    h = x @ w
    s = h.sum().item()  # a host sync, even if torch 2.13 captures it
    h = torch.where(torch.tensor(s) > 0, h * 2, h)
    return torch.relu(h)
