import torch
import torch.fx
from torch._guards import TracingContext, tracing
from torch._subclasses.fake_tensor import FakeTensorMode


def scores(x):                                # x: [B, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_scorer(fn, backend):
    # a traced graph handed to the judge's backend inside a tracing context of its own, as if Dynamo called it
    gm = torch.fx.symbolic_trace(lambda x: (fn(x),))
    state = {}

    def serve(x):
        if "run" not in state:
            with tracing(TracingContext(FakeTensorMode())):
                state["run"] = backend(gm, [x])
        return state["run"](x)[0]

    return serve
