import torch


def build_artifact(fn, example) -> bytes:
    torch.set_grad_enabled(False)                      # an inference artifact: no autograd needed
    aot = torch.compile(fn, fullgraph=True, backend="aot_eager").aot_compile(((example,), {}))
    return type(aot).serialize(aot).serialized_data
