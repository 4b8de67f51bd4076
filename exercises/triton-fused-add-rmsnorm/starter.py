import torch


# The engine's hand-written fused kernel, registered as an operator (as vLLM registers fused_add_rms_norm)
@torch.library.custom_op("vendor::fused_add_rms_norm", mutates_args=())
def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor, w: torch.Tensor,
                       eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    h = x + residual
    hf = h.float()
    out = (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps)).to(h.dtype) * w
    return out, h


@fused_add_rms_norm.register_fake
def _(x, residual, w, eps):
    return torch.empty_like(x), torch.empty_like(x)


def add_rmsnorm(x, residual, w):              # -> (normalized, new residual)
    return fused_add_rms_norm(x, residual, w, 1e-6)
