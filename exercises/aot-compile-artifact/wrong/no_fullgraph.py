import os
import tempfile

import torch


def build_artifact(fn, example) -> bytes:
    aot = torch.compile(fn, backend="aot_eager").aot_compile(((example,), {}))   # fn has no graph break anyway
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fn.aot")
        aot.save_compiled_function(path)
        with open(path, "rb") as f:
            return f.read()
