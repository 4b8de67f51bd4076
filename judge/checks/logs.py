"""Capture torch's structured log artifacts (graph_breaks, recompiles, ...) as records, quietly."""

from __future__ import annotations

import contextlib
import logging

import torch


class _ArtifactHandler(logging.Handler):
    def __init__(self, artifact: str):
        super().__init__(logging.DEBUG)
        self.suffix = f"__{artifact}"
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        if record.name.endswith(self.suffix):
            self.records.append(record)


@contextlib.contextmanager
def artifact_log(artifact: str):
    """Within the block, collect records of the torch log artifact `artifact` into the yielded list."""
    handler = _ArtifactHandler(artifact)
    torch._logging.set_logs(**{artifact: True})
    root = logging.getLogger("torch")
    saved = list(root.handlers)
    for h in saved:
        root.removeHandler(h)
    root.addHandler(handler)
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)
        for h in saved:
            root.addHandler(h)
        torch._logging.set_logs()
