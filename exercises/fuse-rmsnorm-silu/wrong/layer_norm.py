import torch.nn.functional as F


def block(x, w):
    # LayerNorm subtracts the mean; RMSNorm does not
    return F.silu(F.layer_norm(x, (x.shape[-1],), w, eps=1e-6))
