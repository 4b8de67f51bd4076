import torch

torch._dynamo.config.capture_scalar_outputs = True  # changing global settings is not a fix


def step(x, w):
    h = x @ w
    h = torch.where(h.sum() > 0, h * 2, h)
    return torch.relu(h)
