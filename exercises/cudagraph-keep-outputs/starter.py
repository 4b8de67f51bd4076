import torch


def generate(step, h, steps):                  # step: torch.compile(decode_step, mode="reduce-overhead")
    outs = []
    for _ in range(steps):
        h = step(h)                             # lives in the CUDA graph's memory pool
        outs.append(h)                          # ...which the next replay overwrites
    return torch.stack(outs)                    # [steps, B, D]
