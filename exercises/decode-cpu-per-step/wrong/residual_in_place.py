import torch


def decode_step(x, w, scale):
    # updates the caller's x in place to save an allocation: a mutated input, so CUDA graphs are skipped
    for i in range(w.shape[0]):
        x.add_(torch.tanh(x @ w[i]) * scale)
    return x
