# A solution of graph-break-step that keeps state between calls (tests/core/test_shared_sessions.py): each call
# appends to a list, Dynamo guards on its length, so every call compiles again and a shared compile session fills up.
import torch

seen = []  # grows at every call: Dynamo guards on its length, so each call compiles again


def step(x, w):
    seen.append(1)
    h = x @ w
    h = torch.where(h.sum() > 0, h * 2, h)
    return torch.relu(h) if len(seen) < 1000 else h
