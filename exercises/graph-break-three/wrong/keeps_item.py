import torch


def forward(x, w):
    h = x @ w
    h = torch.where(h.abs().max() > 10, h / 10, h)
    scale = h.std().item()  # still a host sync, even where torch 2.13 captures it under fullgraph
    return torch.tanh(h) * scale
