import torch


def attn_scores(x):
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_for_serving(fn, example):
    torch._dynamo.mark_dynamic(example, 1, min=2, max=64)  # a longer request fails the guard T <= 64
    return torch.compile(fn)
