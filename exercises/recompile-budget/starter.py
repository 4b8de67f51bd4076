import torch


def scores(x):                                # x: [B, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_scorer(fn, backend):
    return torch.compile(fn, backend=backend, recompile_limit=2)    # at most 2 compiles; after that, silently eager
