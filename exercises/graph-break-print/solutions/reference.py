import torch


def f(x):
    h = torch.relu(x) * 3
    if not torch.compiler.is_compiling():  # Dynamo 追踪时为 True：这一行不进图  # en: True while Dynamo traces: this line stays out of the graph
        print(f"[debug] mean activation = {h.mean().item():.4f}")
    return h.softmax(-1)
