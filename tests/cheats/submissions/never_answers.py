"""Slow-walks the verifier: the runner never answers a request."""
import importlib
import sys
import time

import torch


def _never(self, request):
    while True:
        time.sleep(60)


importlib.import_module("judge.runner").Runner.answer = _never


def step(x, w):
    return x @ w
