import torch
import torch.fx.experimental._config

torch.fx.experimental._config.backed_size_oblivious = True   # no 0/1 specialisation for backed sizes


def pool(x, w):                               # x: [n, 16] tokens, w: [n] scores; n may be 0 or 1
    return (x * w.softmax(0)[:, None]).sum(0)


def compile_pool(fn):
    compiled = torch.compile(fn)

    def serve(x, w):
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(w, 0)
        return compiled(x, w)

    return serve
