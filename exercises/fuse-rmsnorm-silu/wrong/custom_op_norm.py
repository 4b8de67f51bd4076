import torch
import torch.nn.functional as F


# Registering the vendor kernel as a custom op removes the graph break...
@torch.library.custom_op("mylib::rmsnorm", mutates_args=())
def rmsnorm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


@rmsnorm.register_fake
def _(x, w):
    return torch.empty_like(x)


def block(x, w):
    # ...but a custom op is opaque to Inductor: the norm runs outside the generated kernel
    return F.silu(rmsnorm(x, w))
