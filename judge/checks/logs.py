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
    # set_logs puts stream handlers on "torch" and on some sub-loggers (with propagate off): swap them for ours.
    swapped = {}
    for name in ["torch", *logging.root.manager.loggerDict]:
        logger = logging.getLogger(name)
        if (name == "torch" or name.startswith("torch.")) and logger.handlers:
            swapped[name] = list(logger.handlers)
            for h in swapped[name]:
                logger.removeHandler(h)
            logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        for name, handlers in swapped.items():
            logger = logging.getLogger(name)
            logger.removeHandler(handler)
            for h in handlers:
                logger.addHandler(h)
        torch._logging.set_logs()
