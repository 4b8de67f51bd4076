import torch


def f(x):
    h = torch.relu(x) * 3
    mean = h.mean()  # a tensor: computing it costs nothing extra in the graph
    if not torch.compiler.is_dynamo_compiling():
        print(f"[debug] mean activation = {mean.item():.4f}")
    return h.softmax(-1)
