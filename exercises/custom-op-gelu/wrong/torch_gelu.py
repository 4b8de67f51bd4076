import torch


def block(x, w):
    # one graph and the same numbers, but the "vendor kernel" is gone: nothing was registered
    return torch.nn.functional.gelu(x @ w) + 1.0
