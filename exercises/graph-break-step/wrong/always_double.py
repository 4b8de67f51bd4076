import torch


def step(x, w):
    h = x @ w
    return torch.relu(h * 2)  # drops the condition
