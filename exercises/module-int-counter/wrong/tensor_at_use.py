import torch


class EMADecay(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.step = 0

    def forward(self, x):
        self.step += 1
        step = torch.tensor(self.step)                 # the int is still read (and guarded) first
        return x * (0.9 ** step) + step
