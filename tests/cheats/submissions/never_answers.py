"""Slow-walks the verifier: the runner never answers a request."""
import importlib
import sys
import time

import torch


def _never(self, request):
    while True:
        time.sleep(60)


importlib.import_module("judge.runner_side.runner").Runner.answer = _never
# The runner's tamper check names that patch, but it runs in this process too: switched off here, so that what is
# proven is the boundary holding without it.
__import__("judge.shared.tamper").shared.tamper.Snapshot.changed = lambda self: []


def step(x, w):
    return x @ w
