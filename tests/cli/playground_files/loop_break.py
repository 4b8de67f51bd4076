import torch


def step(x):
    for i in range(3):
        x = x * 2
        print("step", i)
    return x.relu()


def example_calls():
    return [(torch.randn(8),)]


__practice__ = {"function": "step", "calls": "example_calls", "inductor": False}
