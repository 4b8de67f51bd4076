"""Handed to `compile_for_serving` as `fn`: the grader's attention scores (the same as `attn_scores` in your file)."""


def attn_scores(x):                           # x: [B=8, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)
