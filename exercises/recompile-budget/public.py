"""The grader's scoring step (the same as `scores` in your file: the results are compared with it), another function
of the same shapes handed to `compile_scorer` as `fn` once (it must serve whichever `fn` it is given), and the
grader's `backend`."""

from judge.runner_side.compiling import recording_backend


def scores(x):                                # x: [B, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def other_scores(x):                          # another fn of the same shapes
    s = x @ x.transpose(1, 2) / 2.0
    return s.softmax(1).amax(1)


other_scores.__name__ = other_scores.__qualname__ = "scores"


# The grader's counting backend, handed to `compile_scorer` as `backend`: compile with it, your other options kept.
backend = recording_backend
