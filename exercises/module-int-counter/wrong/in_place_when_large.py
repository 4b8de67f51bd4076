import torch


class EMADecay(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("step", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.step += 1
        if x.numel() >= 64:                       # "big activations: save a temporary", written over the caller's x
            return x.mul_(0.9 ** self.step).add_(self.step)
        return x * 0.9 ** self.step + self.step
