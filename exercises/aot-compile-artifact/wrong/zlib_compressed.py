import zlib

import torch


def build_artifact(fn, example) -> bytes:
    aot = torch.compile(fn, fullgraph=True, backend="aot_eager").aot_compile(((example,), {}))
    return zlib.compress(type(aot).serialize(aot).serialized_data)       # smaller to ship
