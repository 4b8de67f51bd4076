import torch


class EMADecay(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.step = 0                                  # python int -> guarded as a constant

    def forward(self, x):
        self.step += 1
        return x * (0.9 ** self.step) + self.step
