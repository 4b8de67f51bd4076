import base64

import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn)
    cf(example)
    data, _info = torch.compiler.save_cache_artifacts()
    return base64.b64encode(data)                  # text-safe bytes, for a config store or an environment variable
