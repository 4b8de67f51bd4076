import torch


def forward(x, w):
    print("forward called")            # break A (first instruction: explain() does not report it)
    h = x @ w
    if h.abs().max() > 10:             # break B: data-dependent branch
        h = h / 10
    scale = h.std().item()             # break C: .item() host sync
    return torch.tanh(h) * scale
