import os
import tempfile

import torch


def build_artifact(fn, example) -> bytes:
    # aot_compile 只接受没有 graph break 的图，所以要 fullgraph=True；aot_eager 省去 Inductor 生成内核的时间  # en: aot_compile takes only graphs without a graph break, hence fullgraph=True; aot_eager skips Inductor's kernel generation
    compiled = torch.compile(fn, fullgraph=True, backend="aot_eager")
    aot = compiled.aot_compile(((example,), {}))      # 现在就编译：参数是 (args, kwargs)  # en: compiles now: the argument is (args, kwargs)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fn.aot")
        aot.save_compiled_function(path)              # 写的正是 load_compiled_function 读的格式  # en: writes exactly what load_compiled_function reads
        with open(path, "rb") as f:
            return f.read()
