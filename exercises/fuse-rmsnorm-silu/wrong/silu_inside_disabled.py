import torch
import torch.nn.functional as F


@torch.compiler.disable
def vendor_rmsnorm_silu(x, w, eps=1e-6):
    # moving SiLU into the skipped function: still a graph break, and nothing left to compile
    return F.silu(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w)


def block(x, w):
    return vendor_rmsnorm_silu(x, w)
