import torch


def scores(x):                                # x: [B, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_scorer(fn, backend):
    compiled = torch.compile(fn, backend=backend, dynamic=True, recompile_limit=2)

    def serve(x):
        torch._dynamo.mark_static(x, 0)            # the batch is small: keep it a constant
        return compiled(x)

    return serve
