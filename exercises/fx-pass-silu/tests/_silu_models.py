"""The grader's models for fx-pass-silu: each shows one pattern the pass must (or must not) rewrite."""

import torch
from torch import nn

D = 16


class _Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(D, D)
        self.gate = nn.Linear(D, D)
        self.out = nn.Linear(D, D)


class XTimesSigmoid(_Base):
    def forward(self, x):
        h = self.inp(x)
        return self.out(h * torch.sigmoid(h))


class SigmoidTimesX(_Base):
    def forward(self, x):
        h = self.inp(x)
        return self.out(torch.sigmoid(h) * h)


class Gating(_Base):
    def forward(self, x):
        a, b = self.inp(x), self.gate(x)
        return self.out(a * torch.sigmoid(b))            # a gate: not a SiLU


class SharedSigmoid(_Base):
    def forward(self, x):
        h = self.inp(x)
        s = torch.sigmoid(h)
        return self.out(h * s + s)                        # s has a second user: it must stay


class OtherMuls(_Base):
    def forward(self, x):
        h = self.inp(x)
        return self.out(torch.sigmoid(h) * 2.0 + h * 0.5 + h * h)


class ResidualSilu(_Base):
    def forward(self, x):
        h = self.inp(x)
        return self.out(h * torch.sigmoid(h) + h)          # h has a third user: still a SiLU of h


class Block(_Base):
    """Everything at once, as in a real model."""

    def forward(self, x):
        h = self.inp(x)
        h = h * torch.sigmoid(h)                          # silu
        g = torch.sigmoid(self.gate(x))
        h = torch.sigmoid(h) * h * g                      # silu (other order), then a gate
        s = torch.sigmoid(h)
        return self.out(h * s + s * 0.5)                  # shared sigmoid stays


# More forms of the pattern: where the nodes sit in the graph must not matter, and only a product is a SiLU.
class SiluOnInput(_Base):
    def forward(self, x):
        return self.out(x * torch.sigmoid(x))             # x is the graph's input: a SiLU all the same


class SiluReturned(_Base):
    def forward(self, x):
        h = self.inp(x)
        return h * torch.sigmoid(h)                       # the graph's output: a SiLU all the same


class SigmoidApart(_Base):
    def forward(self, x):
        h = self.inp(x)
        s = torch.sigmoid(h)
        g = torch.cos(h)                                  # between the sigmoid and its mul in the graph
        return self.out(h * s + g)


class SigmoidOfSigmoid(_Base):
    def forward(self, x):
        y = torch.sigmoid(self.inp(x))
        return self.out(y * torch.sigmoid(y))             # silu(y); y's own sigmoid stays


class NotProducts(_Base):
    def forward(self, x):
        h = self.inp(x)
        a = h + torch.sigmoid(h)                          # a sum, a quotient and a hard sigmoid: no SiLU
        b = h / torch.sigmoid(h)
        c = h * torch.nn.functional.hardsigmoid(h)
        return self.out(a + b + c)


class SharedByTwoMuls(_Base):
    def forward(self, x):
        h = self.inp(x)
        s = torch.sigmoid(h)
        return self.out(h * s + s * h)                    # s has two users, both products by h: it must stay


def make(cls, dtype=torch.float32):
    torch.manual_seed(0)
    return cls().to(dtype).eval()
