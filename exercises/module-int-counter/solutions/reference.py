import torch


class EMADecay(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # A buffer is a tensor input of the graph, not a constant baked into it, and it is saved in
        # state_dict. Its value can change every step without failing a guard.
        self.register_buffer("step", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.step += 1                                 # in place: the buffer itself advances
        return x * (0.9 ** self.step) + self.step
