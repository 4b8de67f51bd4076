import pickle

import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn)
    cf(example)
    return pickle.dumps(torch.compiler.save_cache_artifacts())   # the whole (bytes, CacheInfo) tuple
