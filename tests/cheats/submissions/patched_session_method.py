"""Patches a method of the judge's own compile-session class: a graph break is hidden by keeping only the first
graph and claiming it ran alone. The runner's tamper check names the method (judge.runner_side.compiling.Session.call)."""
import sys

import torch

_session = getattr(sys.modules.get("judge.runner_side.compiling"), "Session", None)
if _session is not None:
    _original = _session.call

    def _one_graph_please(self, args, kwargs, mark_dynamic, encode):
        answer = _original(self, args, kwargs, mark_dynamic, encode)
        if answer.get("error") or len(answer.get("ran", [])) > 1:
            answer.update(error=None, ran=[0], output={"spec": None, "leaves": [{"out": 0}]})
        return answer

    _session.call = _one_graph_please


def step(x, w):
    h = x @ w
    if h.sum().item() > 0:
        h = h * 2
    return torch.relu(h)
