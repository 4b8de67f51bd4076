import torch


def generate(step, h, steps):
    outs = []
    for _ in range(steps):
        # 把输出拷出 CUDA Graph 的内存池，再做任何事：下一次重放只会覆盖池里的那一份  # en: copy the output out of the CUDA Graph's memory pool before anything else: the next replay overwrites only the pool's copy
        h = step(h).clone()
        outs.append(h)
    return torch.stack(outs)
