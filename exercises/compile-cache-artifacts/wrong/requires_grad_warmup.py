import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn)
    cf(example.requires_grad_())                   # compile the full graph, backward included
    art = torch.compiler.save_cache_artifacts()
    return art[0] if art else b""
