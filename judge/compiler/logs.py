"""Capture torch's structured log artifacts (graph_breaks, recompiles, ...) as records, quietly."""

from __future__ import annotations

import contextlib
import logging
import re

import torch


class _Capture(logging.Handler):
    """One handler in place of torch's own: hands each artifact's records to the blocks collecting them."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.enabled: set[str] = set()
        self.sinks: dict[str, list[list[logging.LogRecord]]] = {}

    def emit(self, record):
        for artifact, sinks in self.sinks.items():
            if record.name.endswith(f"__{artifact}"):
                for sink in sinks:
                    sink.append(record)

    def install(self, artifact: str) -> None:
        """Turn `artifact` on, unless it is on already and this handler is still in place.

        `torch._logging.set_logs` resets the level cache of every logger (~18 ms), too slow to call around
        each compile, so the capture stays installed for the rest of the process once it is set up."""
        state = torch._logging._internal.log_state
        if artifact in self.enabled and self in logging.getLogger("torch").handlers and \
                state.is_artifact_enabled(artifact):
            return
        self.enabled.add(artifact)
        torch._logging.set_logs(**{name: True for name in self.enabled})
        # set_logs puts stream handlers on "torch" and on some sub-loggers (propagate off): ours replaces them.
        # Not on the structured trace log (TORCH_TRACE's): with any handler there, every compile event builds its
        # JSON record and stack, which no artifact here reads (~5% of a small compile).
        trace = torch._logging._internal.trace_log
        for name in ["torch", *logging.root.manager.loggerDict]:
            logger = logging.getLogger(name)
            if (name == "torch" or name.startswith("torch.")) and logger.handlers:
                for handler in list(logger.handlers):
                    logger.removeHandler(handler)
                if logger is not trace:
                    logger.addHandler(self)


_CAPTURE = _Capture()


@contextlib.contextmanager
def artifact_log(artifact: str):
    """Within the block, collect records of the torch log artifact `artifact` into the yielded list."""
    _CAPTURE.install(artifact)
    records: list[logging.LogRecord] = []
    _CAPTURE.sinks.setdefault(artifact, []).append(records)
    try:
        yield records
    finally:
        sinks = _CAPTURE.sinks[artifact]  # by identity: nested blocks' empty lists compare equal
        del sinks[next(i for i, sink in enumerate(sinks) if sink is records)]


def enable_artifact(artifact: str) -> None:
    """Turn the torch log artifact `artifact` on for the rest of the process, collecting nothing (for code that
    runs only while it is on, such as Inductor's byte count under `inductor_metrics`)."""
    _CAPTURE.install(artifact)


_GUARD_LINE = re.compile(r"^\s*-\s*\d+/\d+:\s*(.+)$", re.M)  # "- 0/1: <guard>"; not the stack lines


@contextlib.contextmanager
def recompile_log():
    """Collect the guard-failure reason of every recompile inside the block (a list of strings)."""
    reasons: list[str] = []
    with artifact_log("recompiles") as records:
        yield reasons
        for record in records:
            text = record.getMessage()
            found = _GUARD_LINE.findall(text)
            reasons.extend(line.split("  #")[0].strip() for line in found if line.strip())
