import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn, mode="reduce-overhead")  # a serving build: the low-overhead mode
    cf(example)
    art = torch.compiler.save_cache_artifacts()
    return art[0] if art else b""
