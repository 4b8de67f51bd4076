import torch
import torch.nn.functional as F


@torch.compiler.disable                      # "vendor" kernel Dynamo must skip
def vendor_rmsnorm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def block(x, w):
    return F.silu(vendor_rmsnorm(x, w))
