import torch


def f(x):
    h = torch.relu(x) * 3  # the debug line is gone: one graph, but the eager run no longer prints
    return h.softmax(-1)
