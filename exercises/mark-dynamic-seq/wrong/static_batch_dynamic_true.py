import torch


def attn_scores(x):                           # x: [B=8, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)



def compile_for_serving(fn, example):
    torch._dynamo.mark_static(example, 0)      # the batch is always 8: keep it a constant,
    return torch.compile(fn, dynamic=True)     # every other dimension symbolic
