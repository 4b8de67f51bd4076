import torch


class EMADecay(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # A small counter: two bytes are plenty.
        self.register_buffer("step", torch.zeros((), dtype=torch.bfloat16))

    def forward(self, x):
        self.step += 1
        return x * (0.9 ** self.step) + self.step
