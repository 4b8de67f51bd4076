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

    def install(self, *artifacts: str) -> None:
        """Turn `artifacts` on, unless they are on already and this handler is still in place.

        `torch._logging.set_logs` resets the level cache of every logger (~13 ms), too slow to call around
        each compile, so the capture stays installed for the rest of the process once it is set up."""
        state = torch._logging._internal.log_state
        if set(artifacts) <= self.enabled and self in logging.getLogger("torch").handlers and \
                all(state.is_artifact_enabled(a) for a in artifacts):
            return
        self.enabled.update(artifacts)
        _set_logs_clearing_once(**{name: True for name in self.enabled})
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


def _set_logs_clearing_once(**artifacts) -> None:
    """`torch._logging.set_logs`, with the level caches of all loggers cleared once at the end rather than once per
    logger it sets (each `Logger.setLevel` clears every logger's cache: ~100 loggers set x ~1300 cleared, ~13 ms)."""
    manager = logging.Logger.manager
    manager._clear_cache = lambda: None  # type: ignore[attr-defined]  # over the method: removed below
    try:
        torch._logging.set_logs(**artifacts)
    finally:
        del manager._clear_cache  # type: ignore[attr-defined]
        manager._clear_cache()  # type: ignore[attr-defined]


_CAPTURE = _Capture()
# The artifacts a runner or a verifier turns on in every grading (judge/runner_side/compiling.py,
# judge/verifier_side/verifier.py, judge/costs/measure.py, judge/compiler/breaks.py).
SHARED_ARTIFACTS = ("recompiles", "graph_breaks", "output_code", "inductor_metrics")


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


def enable_artifacts_before_fork() -> None:
    """Turn on, with one `set_logs`, the artifacts that both roles' forked children would otherwise turn on one by
    one (each call ~13 ms, paid again in every child). Not `guards`: while it is on, Dynamo records a stack for
    every guard it installs, which only the runner wants."""
    _CAPTURE.install(*SHARED_ARTIFACTS)


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
