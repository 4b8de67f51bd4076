import torch


def attn_scores(x):
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_for_serving(fn, example):
    # a hint rather than a demand: Dynamo may still specialise if the code requires it (here it does not)
    torch._dynamo.maybe_mark_dynamic(example, 1)
    return torch.compile(fn)
