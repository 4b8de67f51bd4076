import base64

import torch


def build_artifact(fn, example) -> bytes:
    aot = torch.compile(fn, fullgraph=True, backend="aot_eager").aot_compile(((example,), {}))
    return base64.b64encode(type(aot).serialize(aot).serialized_data)   # text-safe, for a config store
