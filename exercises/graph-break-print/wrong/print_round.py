import torch


def f(x):
    h = torch.relu(x) * 3
    if not torch.compiler.is_compiling():
        print(f"[debug] mean activation = {round(h.mean().item(), 4)}")  # 保留 4 位小数
    return h.softmax(-1)
