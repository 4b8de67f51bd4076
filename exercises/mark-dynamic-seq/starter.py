import torch


def attn_scores(x):                           # x: [B=8, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_for_serving(fn, example):
    return torch.compile(fn)                   # 1st call static, 2nd call recompiles as dynamic
