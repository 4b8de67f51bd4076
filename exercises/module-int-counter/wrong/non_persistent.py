import torch


class EMADecay(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("step", torch.zeros((), dtype=torch.int64), persistent=False)

    def forward(self, x):
        self.step += 1
        return x * (0.9 ** self.step) + self.step
