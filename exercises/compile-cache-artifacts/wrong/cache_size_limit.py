import torch


def build_artifacts(fn, example) -> bytes:
    torch._dynamo.config.cache_size_limit = 64     # room for every shape the service will ever see
    cf = torch.compile(fn)
    cf(example)
    art = torch.compiler.save_cache_artifacts()
    return art[0] if art else b""
