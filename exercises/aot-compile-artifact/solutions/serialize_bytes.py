import torch


def build_artifact(fn, example) -> bytes:
    # the same artifact without a file: serialize() is what save_compiled_function writes to its path
    precompiled = torch.compile(fn, backend="aot_eager", fullgraph=True).aot_compile(((example,), {}))
    return type(precompiled).serialize(precompiled).serialized_data
