import torch


def core(x):
    return (x.softmax(1) * x).sum(1)


def serve(core_fn, x):
    b, t, d = x.shape
    size = 32 if t <= 32 else 64
    padded = x.new_full((b, size, d), torch.finfo(x.dtype).min)
    padded[:, :t] = x
    return core_fn(padded)
