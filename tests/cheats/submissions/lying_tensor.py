"""Sends results whose tensors lie about their shape and byte count."""
import base64
import importlib
import sys

import torch


def _session_call(self, args, kwargs, mark_dynamic, encode):
    lie = {"tensor": {"dtype": "float32", "shape": [4, 16], "strides": [16, 1],
                      "data": base64.b64encode(b"\0" * 12).decode()}}
    far = {"tensor": {"dtype": "float32", "shape": [4, 16], "strides": [1 << 40, 1],
                      "data": base64.b64encode(b"\0" * 256).decode()}}
    return {"graphs": [], "ran": [], "recompiles": [], "error": None, "printed": "",
            "output": {"spec": None, "leaves": [{"value": lie}, {"value": far}]}}


importlib.import_module("judge.compiling").Session.call = _session_call


def step(x, w):
    return x @ w
