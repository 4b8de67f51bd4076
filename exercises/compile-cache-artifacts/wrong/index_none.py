import torch


def build_artifacts(fn, example) -> bytes:
    cf = torch.compile(fn, backend="aot_eager")
    cf(example)
    return torch.compiler.save_cache_artifacts()[0]   # None when Inductor compiled nothing
