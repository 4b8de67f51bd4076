"""The grader's pooling step (the same as `pool` in your file: the results are compared with it), and another
function of the same shapes handed to `compile_pool` as `fn` once (it must serve whichever `fn` it is given)."""


def pool(x, w):                               # x: [n, 16] tokens, w: [n] scores; n may be 0 or 1
    return (x * w.softmax(0)[:, None]).sum(0)


def other_pool(x, w):                         # another fn of the same shapes
    return (x * w.sigmoid()[:, None]).sum(0) - x.sum(0) / 4


other_pool.__name__ = other_pool.__qualname__ = "pool"
