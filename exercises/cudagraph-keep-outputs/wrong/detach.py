import torch


def generate(step, h, steps):
    outs = []
    for _ in range(steps):
        h = step(h)
        outs.append(h.detach())                 # a new tensor object, but the same memory in the graph's pool
    return torch.stack(outs)
