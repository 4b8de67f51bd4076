import torch


class EMADecay(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.step = 0

    @torch.compiler.disable                            # "no recompiles": Dynamo never compiles it at all
    def forward(self, x):
        self.step += 1
        return x * (0.9 ** self.step) + self.step
