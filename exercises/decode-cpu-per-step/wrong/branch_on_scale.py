import torch


def decode_step(x, w, scale):
    for i in range(w.shape[0]):
        h = torch.tanh(x @ w[i])
        if scale != 1:                     # a data-dependent branch: a graph break
            h = h * scale
        x = x + h
    return x
