import torch


def rms_norm(x, w, eps=1e-6):
    # the mean of |x| instead of the root of the mean of squares
    return x / (x.abs().mean(-1, keepdim=True) + eps) * w
