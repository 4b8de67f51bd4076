import torch


def scores(x):                                # x: [B, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)


def compile_scorer(fn, backend):
    # 从第一次编译起 B 和 T 都是符号：一张图服务所有 B, T >= 2，T = 1 再编译一次，正好两次  # en: B and T are symbolic from the first compile: one graph serves every B, T >= 2, and T = 1 compiles once more: two in all
    # 上限保持 2：再有新的 guard 失败也只会回退到 eager，不会无休止地编译  # en: the limit stays 2: a further failing guard falls back to eager instead of compiling on and on
    return torch.compile(fn, backend=backend, dynamic=True, recompile_limit=2)
