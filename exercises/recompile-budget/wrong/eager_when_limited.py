import torch


def scores(x):                                # x: [B, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_scorer(fn, backend):
    compiled = torch.compile(fn, backend=backend, dynamic=True)

    def serve(x):
        if torch._dynamo.utils.counters["stats"]["unique_graphs"] >= 2:
            return fn(x)                           # the budget is spent: serve eagerly, never compile a 3rd
        return compiled(x)

    return serve
