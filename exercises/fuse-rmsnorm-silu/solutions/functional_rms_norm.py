import torch.nn.functional as F


def block(x, w):
    # F.rms_norm computes x * rsqrt(mean(x^2) + eps) * w; Inductor decomposes and fuses it
    return F.silu(F.rms_norm(x, (x.shape[-1],), w, eps=1e-6))
