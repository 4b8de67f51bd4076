import torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


torch.manual_seed(0)
model = MLP()


def example_calls():
    return [(torch.randn(8, 16),), (torch.randn(8, 16),)]


__practice__ = {"function": "model", "calls": "example_calls"}
