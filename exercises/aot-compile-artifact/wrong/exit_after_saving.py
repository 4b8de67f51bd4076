import os

import torch


def build_artifact(fn, example) -> bytes:
    aot = torch.compile(fn, fullgraph=True, backend="aot_eager").aot_compile(((example,), {}))
    aot.save_compiled_function("fn.aot")
    os._exit(0)                                        # the artifact is on disk: skip the slow teardown
