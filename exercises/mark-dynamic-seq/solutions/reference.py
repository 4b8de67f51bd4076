import torch


def attn_scores(x):                           # x: [B=8, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_for_serving(fn, example):
    # 第一次调用前就把序列维标成动态：第一次编译出的就是对任意 T 成立的图，batch 维仍按 8 特化  # en: mark the sequence dimension dynamic before the first call: the first compile makes a graph for any T, the batch dimension is still specialised to 8
    torch._dynamo.mark_dynamic(example, 1)
    return torch.compile(fn)
