import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn)
    cf(example)                                    # the first call compiles (and fills the caches)
    art = torch.compiler.save_cache_artifacts()    # (bytes, CacheInfo) of what this process compiled
    return art[0] if art else b""
