import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn, dynamic=True)           # a dynamic graph: a different cache key from the static one
    cf(example)
    art = torch.compiler.save_cache_artifacts()
    return art[0] if art else b""
