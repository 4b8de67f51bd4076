import torch


def build_artifact(fn, example) -> bytes:
    precise = example.double()                         # compile in float64 to be safe
    aot = torch.compile(fn, fullgraph=True, backend="aot_eager").aot_compile(((precise,), {}))
    return type(aot).serialize(aot).serialized_data
