import torch


def build_artifacts(fn, example) -> bytes:
    # fullgraph only makes a graph break an error; the graph, and so the cache key, are the same
    torch.compile(fn, fullgraph=True)(example)
    artifacts = torch.compiler.save_cache_artifacts()
    if artifacts is None:
        raise RuntimeError("nothing was compiled with Inductor, so there is nothing to save")
    data, _info = artifacts
    return data
