import torch


def build_artifact(fn, example) -> bytes:
    example.requires_grad_()                           # so that the artifact also supports training
    aot = torch.compile(fn, fullgraph=True, backend="aot_eager").aot_compile(((example,), {}))
    return type(aot).serialize(aot).serialized_data
