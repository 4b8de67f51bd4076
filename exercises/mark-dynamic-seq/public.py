"""Handed to `compile_for_serving` as `fn`: the grader's attention scores (the same as `attn_scores` in your file),
or another function of the same shapes (`compile_for_serving` must serve whichever `fn` it is given)."""


def attn_scores(x):                           # x: [B=8, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def other_scores(x):                          # another fn of the same shapes
    s = x @ x.transpose(1, 2) / 2.0
    return s.softmax(1).amax(1)


other_scores.__name__ = other_scores.__qualname__ = "attn_scores"
