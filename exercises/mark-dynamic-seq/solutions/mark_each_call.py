import torch


def attn_scores(x):
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_for_serving(fn, example):
    compiled = torch.compile(fn)

    def serve(x):
        # marking every request works whichever tensor happens to be served first
        torch._dynamo.mark_dynamic(x, 1)
        return compiled(x)

    return serve
