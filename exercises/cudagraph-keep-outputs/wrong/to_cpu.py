import torch


def generate(step, h, steps):
    outs = []
    for _ in range(steps):
        h = step(h)
        outs.append(h.cpu())                    # a copy, but to the host: a sync per step, off the GPU
    return torch.stack(outs)
