import torch

_DECAY = (0.9 ** torch.arange(40, dtype=torch.float64)).float()   # 0.9**n for n < 40 only


class EMADecay(torch.nn.Module):
    """Looks the decay up in a 40-entry table: right for steps 1..39, an index error from step 40 on."""
    def __init__(self):
        super().__init__()
        self.register_buffer("step", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.step += 1
        return x * torch.take(_DECAY, self.step) + self.step
