"""A backend that records what Dynamo captured: each graph and its example inputs (both sandboxed processes)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.fx


@dataclass
class Captured:
    """The result of a recorded compile: the output and every graph Dynamo handed to the backend."""

    output: object
    graphs: list[torch.fx.GraphModule] = field(default_factory=list)
    example_inputs: list[list] = field(default_factory=list)


class RecordingBackend:
    """A backend that records each graph and runs it with `inner` (default: eager)."""

    def __init__(self, inner="eager"):
        self.inner = inner
        self.graphs: list[torch.fx.GraphModule] = []
        self.example_inputs: list[list] = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        self.example_inputs.append(list(example_inputs))
        if self.inner == "eager":
            return gm.forward
        from torch._dynamo.backends.registry import lookup_backend

        return lookup_backend(self.inner)(gm, example_inputs)
