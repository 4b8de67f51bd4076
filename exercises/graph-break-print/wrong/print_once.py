import torch

_printed = False


def f(x):
    global _printed
    h = torch.relu(x) * 3
    if not torch.compiler.is_compiling() and not _printed:
        # 调试行只打一次，免得刷屏
        print(f"[debug] mean activation = {h.mean().item():.4f}")
        _printed = True
    return h.softmax(-1)
