import zlib

import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn)
    cf(example)
    data, _info = torch.compiler.save_cache_artifacts()
    return zlib.compress(data)                     # smaller to ship with the service image
