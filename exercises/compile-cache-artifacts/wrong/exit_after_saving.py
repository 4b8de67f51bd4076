import os

import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn)
    cf(example)
    data, _ = torch.compiler.save_cache_artifacts()
    with open("artifacts.bin", "wb") as f:
        f.write(data)
    os._exit(0)   # "the cache is saved: skip the slow interpreter teardown"
