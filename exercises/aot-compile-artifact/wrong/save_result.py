import os
import tempfile

import torch


def build_artifact(fn, example) -> bytes:
    aot = torch.compile(fn, fullgraph=True, backend="aot_eager").aot_compile(((example,), {}))
    with tempfile.TemporaryDirectory() as tmp:
        return aot.save_compiled_function(os.path.join(tmp, "fn.aot"))   # "returns what it saved"
