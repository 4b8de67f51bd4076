import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn, backend="aot_eager")    # quick to build, but no Inductor output to cache
    cf(example)
    art = torch.compiler.save_cache_artifacts()
    return art[0] if art else b""
