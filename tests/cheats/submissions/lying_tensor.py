"""Sends results whose tensors lie about their shape and byte count (next to an honest graph)."""
import base64
import importlib

import torch

Session = importlib.import_module("judge.runner_side.compiling").Session
_honest_call = Session.call


def _lying_call(self, args, kwargs, mark_dynamic, encode):
    answer = _honest_call(self, args, kwargs, mark_dynamic, encode)
    short = {"tensor": {"dtype": "float32", "shape": [4, 16], "strides": [16, 1],
                        "data": base64.b64encode(b"\0" * 12).decode()}}
    far = {"tensor": {"dtype": "float32", "shape": [4, 16], "strides": [1 << 40, 1],
                      "data": base64.b64encode(b"\0" * 256).decode()}}
    answer["output"] = {"spec": None, "leaves": [{"value": short}, {"value": far}]}
    return answer


Session.call = _lying_call
# The runner's tamper check names that patch, but it runs in this process too: switched off here, so that what is
# proven is the boundary holding without it.
__import__("judge.shared.tamper").shared.tamper.Snapshot.changed = lambda self: []


def step(x, w):
    h = x @ w
    return torch.relu(torch.where(h.sum() > 0, h * 2, h))
