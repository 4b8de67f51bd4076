import torch


def attn_scores(x):                           # x: [B=8, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_for_serving(fn, example):
    # process-wide: dim 1 of every argument named x is dynamic in every compile from now on
    torch.compiler.config.dynamic_sources = "L['x']:1"
    return torch.compile(fn)
