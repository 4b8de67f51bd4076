import torch


def generate(step, h, steps):
    outs = []
    for _ in range(steps):
        torch.compiler.cudagraph_mark_step_begin()   # as the error message suggests: "before each model invocation"
        h = step(h)
        outs.append(h)
    return torch.stack(outs)
