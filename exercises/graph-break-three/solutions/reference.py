import torch


def forward(x, w):
    if not torch.compiler.is_compiling():  # 调试输出只留给 eager  # en: the debug output is only for eager
        print("forward called")
    h = x @ w
    h = torch.where(h.abs().max() > 10, h / 10, h)  # 两个分支都算，条件留在图里  # en: compute both branches; the condition stays in the graph
    scale = h.std()  # 0 维张量，不再拷回 Python  # en: a 0-d tensor, no longer copied back to Python
    return torch.tanh(h) * scale
