import torch


def rms_norm(x, w, eps=1e-6):
    # computes in float32 "for speed" and never casts back: float64 callers get float32
    xf, wf = x.float(), w.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * wf
