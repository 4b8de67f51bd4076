import pickle

import torch


def build_artifact(fn, example) -> bytes:
    aot = torch.compile(fn, fullgraph=True, backend="aot_eager").aot_compile(((example,), {}))
    return pickle.dumps(aot)                           # the compiled function is an object: pickle it
