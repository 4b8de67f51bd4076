import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn)
    cf(example.double())                           # warm up in float64, to be safe on precision
    art = torch.compiler.save_cache_artifacts()
    return art[0] if art else b""
