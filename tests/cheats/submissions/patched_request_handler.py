"""Replaces the runner's request handler: every request gets an answer claiming success with no graph."""
import importlib
import sys

import torch


def _fake_answer(self, request):
    return {"graphs": [], "ran": [0], "output": {"spec": None, "leaves": [{"value": 1.0}]}, "error": None,
            "breaks": [], "changes": [], "result": 1.0, "printed": ""}


for module in list(sys.modules.values()):
    runner_class = getattr(module, "Runner", None)
    if isinstance(runner_class, type):
        runner_class.answer = _fake_answer

# The runner's tamper check names that patch, but it runs in this process too: switched off here, so that what is
# proven is the boundary holding without it.
__import__("judge.shared.tamper").shared.tamper.Snapshot.changed = lambda self: []


def step(x, w):
    return x @ w
