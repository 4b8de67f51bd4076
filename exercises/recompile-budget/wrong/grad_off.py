import torch


def scores(x):                                # x: [B, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_scorer(fn, backend):
    torch.set_grad_enabled(False)                  # inference only: no autograd, smaller graphs
    return torch.compile(fn, backend=backend, dynamic=True, recompile_limit=2)
