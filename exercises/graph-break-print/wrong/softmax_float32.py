import torch


def f(x):
    h = torch.relu(x) * 3
    if not torch.compiler.is_compiling():
        print(f"[debug] mean activation = {h.mean().item():.4f}")
    return h.softmax(-1, dtype=torch.float32)  # softmax 在 float32 里算，数值更稳
