"""Makes the runner send a graph whose output is a constant precomputed from the example inputs."""
import importlib
import sys

import torch


def original(x, w):
    h = x @ w
    if h.sum().item() > 0:
        h = h * 2
    return torch.relu(h)


class ConstantGraph(torch.nn.Module):
    def __init__(self, value):
        super().__init__()
        self.register_buffer("value", value)

    def forward(self, x, w):
        return (self.value,)


def _session_call(self, args, kwargs, mark_dynamic, encode):
    value = original(*args)
    gm = torch.fx.symbolic_trace(ConstantGraph(value))
    index = len(self.graphs)
    self.graphs.append((gm, [{"kind": "arg", "path": [0]}, {"kind": "arg", "path": [1]}]))
    from judge.shared import ir
    new = [{"index": i, "ir": ir.to_ir(g), "inputs": inputs} for i, (g, inputs) in enumerate(self.graphs)
           if i >= self.sent]
    self.sent = len(self.graphs)
    return {"graphs": new, "ran": [index], "recompiles": [], "error": None, "printed": "",
            "output": {"spec": None, "leaves": [{"out": 0}]}}


importlib.import_module("judge.runner_side.compiling").Session.call = _session_call
# The runner's tamper check names that patch, but it runs in this process too: switched off here, so that what is
# proven is the verifier rejecting the graph itself.
importlib.import_module("judge.shared.tamper").Snapshot.changed = lambda self: []


def step(x, w):
    return original(x, w)
