import torch


def debug_mean(h):
    # Dynamo inlines this helper; under tracing it returns before the print.
    if torch.compiler.is_compiling():
        return
    print(f"[debug] mean activation = {h.mean().item():.4f}")


def f(x):
    h = torch.relu(x) * 3
    debug_mean(h)
    return h.softmax(-1)
