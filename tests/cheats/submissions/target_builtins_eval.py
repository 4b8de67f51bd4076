"""Sends a graph that calls builtins.eval, which is not a tensor operation."""
import importlib
import sys

import torch


def _session_call(self, args, kwargs, mark_dynamic, encode):
    from judge.shared import ir
    graph = {"version": 1, "attrs": {}, "subgraphs": {}, "nodes": [
        {"name": "x", "op": "placeholder", "target": "x", "args": {"tuple": []}, "kwargs": {"dict": {}}},
        {"name": "w", "op": "placeholder", "target": "w", "args": {"tuple": []}, "kwargs": {"dict": {}}},
        {"name": "bad", "op": "call_function", "target": "builtins.eval",
         "args": {"tuple": ["print('owned')"]}, "kwargs": {"dict": {}}},
        {"name": "output", "op": "output", "target": "output", "args": {"tuple": [{"tuple": [{"node": "x"}]}]},
         "kwargs": {"dict": {}}}]}
    return {"graphs": [{"index": 0, "ir": graph, "inputs": [{"kind": "arg", "path": [0]},
                                                             {"kind": "arg", "path": [1]}]}],
            "ran": [0], "recompiles": [], "error": None, "printed": "",
            "output": {"spec": None, "leaves": [{"out": 0}]}}


importlib.import_module("judge.runner_side.compiling").Session.call = _session_call


def step(x, w):
    return torch.relu(torch.where((x @ w).sum() > 0, (x @ w) * 2, x @ w))
