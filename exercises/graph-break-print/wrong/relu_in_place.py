import torch


def f(x):
    h = x.relu_() * 3  # 原地 relu，省一次分配
    if not torch.compiler.is_compiling():
        print(f"[debug] mean activation = {h.mean().item():.4f}")
    return h.softmax(-1)
