import torch


def f(x):
    h = torch.relu(x) * 3
    out = h.softmax(-1)
    if not torch.compiler.is_compiling():
        # moved below the softmax: it now prints the mean of the output, not of the activation
        print(f"[debug] mean activation = {out.mean().item():.4f}")
    return out
