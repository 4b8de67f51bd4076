import torch


def refine(h, w):
    for _ in range(3):
        h = h - 0.1 * torch.tanh(h @ w)
    return h


def _keep(h, w):
    return h.clone()


def step(x, w):
    h = x * 2
    # 只是决定走哪个分支，float32 就够了  # en: only deciding the branch: float32 is enough
    h = torch.cond(h.float().abs().amax() > 4.0, refine, _keep, (h, w))
    return h * 0.5
