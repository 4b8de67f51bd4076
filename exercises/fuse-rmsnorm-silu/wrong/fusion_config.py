import torch
import torch._inductor.config as inductor_config
import torch.nn.functional as F

# 让 Inductor 更积极地融合，确保只剩一个内核
inductor_config.aggressive_fusion = True


def block(x, w, eps=1e-6):
    return F.silu(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w)
