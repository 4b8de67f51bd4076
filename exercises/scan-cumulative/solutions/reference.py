import torch
from torch._higher_order_ops.scan import scan


def ema(x, decay):                            # x: [T, D], decay: [D] in (0, 1) -> [T, D]
    def step(h, x_t):
        # 循环体只追踪一次；scan 对 x 的第 0 维逐步调用它，T 可以是任意值  # en: the body is traced once; scan calls it along dim 0 of x, for any T
        h = decay * h + (1 - decay) * x_t
        return h, h.clone()                   # (新的进位, 这一步的输出)  # en: (the next carry, this step's output)

    _, out = scan(step, torch.zeros_like(x[0]), x)
    return out
