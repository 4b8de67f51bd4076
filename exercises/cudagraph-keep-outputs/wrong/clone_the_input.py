import torch


def generate(step, h, steps):
    outs = []
    for _ in range(steps):
        h = step(h.clone())                     # copies what goes in; what comes out still lives in the pool
        outs.append(h)
    return torch.stack(outs)
