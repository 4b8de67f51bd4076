"""Sends the graph of the original step as it runs on the example inputs: the branch the example took is
baked in (traced with make_fx after deciding the branch eagerly, as tracing the original would)."""
import importlib

import torch
from torch.fx.experimental.proxy_tensor import make_fx


def original(x, w):
    h = x @ w
    if h.sum().item() > 0:
        h = h * 2
    return torch.relu(h)


def _session_call(self, args, kwargs, mark_dynamic, encode):
    x, w = args
    doubled = bool((x @ w).sum() > 0)
    gm = make_fx(lambda x, w: torch.relu((x @ w) * 2) if doubled else torch.relu(x @ w))(x, w)
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
