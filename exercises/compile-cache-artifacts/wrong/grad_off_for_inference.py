import torch


def build_artifacts(fn, example) -> bytes:
    torch.set_grad_enabled(False)                  # an inference build: no autograd graph to compile
    cf = torch.compile(fn)
    cf(example)
    art = torch.compiler.save_cache_artifacts()
    return art[0] if art else b""
