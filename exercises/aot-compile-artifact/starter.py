import torch


def build_artifact(fn, example) -> bytes:
    compiled = torch.compile(fn, backend="aot_eager")
    compiled(example)                                  # 编译好了  # en: compiled now
    data = torch.compiler.save_cache_artifacts()       # 缓存打包带走  # en: pack the caches to take along
    return data[0] if data else b""
