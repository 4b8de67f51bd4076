import torch

# Dynamo may then move print calls out of the graph, but it changes a global setting for every
# compiled function in the process: not a fix of this function
torch._dynamo.config.reorderable_logging_functions.add(print)


def f(x):
    h = torch.relu(x) * 3
    print(f"[debug] mean activation = {h.mean().item():.4f}")
    return h.softmax(-1)
