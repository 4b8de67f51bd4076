import torch


def f(x):
    h = torch.relu(x) * 3
    if not torch.compiler.is_compiling():
        print(f"[debug] mean activation = {h.mean().item():.4f}")
        return h  # the debug path "only needs the activation": it returns before the softmax
    return h.softmax(-1)
