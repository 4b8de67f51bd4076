import torch


class EMADecay(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("step", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        out = x * (0.9 ** self.step) + self.step       # uses the count before this step
        self.step += 1
        return out
