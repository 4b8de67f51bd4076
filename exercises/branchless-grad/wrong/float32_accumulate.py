import torch


def f(s):
    # 至少用 float32 累加更准（float64 保持 float64）
    t = s.sum(dtype=torch.promote_types(s.dtype, torch.float32))
    positive = t > 0
    safe_t = torch.where(positive, t, torch.ones_like(t))
    return torch.where(positive, torch.sqrt(safe_t), -t)
