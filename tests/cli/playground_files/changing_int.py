import torch


def scale(x, n):
    h = x + 1
    return h * n


__practice__ = {"function": "scale", "calls": "example_calls", "inductor": False}


def example_calls():
    return [(torch.randn(4), 2), (torch.randn(4), 3), (torch.randn(4), 4)]
