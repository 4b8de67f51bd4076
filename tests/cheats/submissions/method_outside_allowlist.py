"""Sends a graph that calls a method a tensor does not have but a string does (str.format via call_method)."""
import importlib
import sys

import torch


def _session_call(self, args, kwargs, mark_dynamic, encode):
    graph = {"version": 1, "attrs": {}, "subgraphs": {}, "nodes": [
        {"name": "x", "op": "placeholder", "target": "x", "args": {"tuple": []}, "kwargs": {"dict": {}}},
        {"name": "w", "op": "placeholder", "target": "w", "args": {"tuple": []}, "kwargs": {"dict": {}}},
        {"name": "bad", "op": "call_method", "target": "__class__", "args": {"tuple": [{"node": "x"}]},
         "kwargs": {"dict": {}}},
        {"name": "output", "op": "output", "target": "output", "args": {"tuple": [{"tuple": [{"node": "x"}]}]},
         "kwargs": {"dict": {}}}]}
    return {"graphs": [{"index": 0, "ir": graph, "inputs": [{"kind": "arg", "path": [0]},
                                                             {"kind": "arg", "path": [1]}]}],
            "ran": [0], "recompiles": [], "error": None, "printed": "",
            "output": {"spec": None, "leaves": [{"out": 0}]}}


importlib.import_module("judge.runner_side.compiling").Session.call = _session_call


def step(x, w):
    return x @ w
