"""Count compiles and explain recompiles with the guard that failed."""

from __future__ import annotations

import contextlib
import re

import torch

from judge.checks.failures import Recompile
from judge.checks.graphs import RecordingBackend
from judge.compiler.logs import artifact_log
from judge.reports.i18n import T
from judge.reports.report import RecompileDiagnostic


class CompileCounter(RecordingBackend):
    """A recording backend: `.frame_count` compiles, `.graphs` what each compile captured."""

    @property
    def frame_count(self) -> int:
        return len(self.graphs)

    def input_shapes(self) -> list[list]:
        """The example-input shapes of each compile (symbolic sizes shown as their symbols)."""
        return [[list(t.shape) if isinstance(t, torch.Tensor) else t for t in inputs]
                for inputs in self.example_inputs]


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


def assert_compiles(counter: CompileCounter, *, at_most: int, what: T | str = T("your code"),
                    guard_failures: list[str] | None = None) -> None:
    """Fail with RECOMPILE if `counter` saw more than `at_most` compiles."""
    if counter.frame_count <= at_most:
        return
    failures = list(guard_failures or [])
    if failures:
        message = T("{what} was compiled {count} times; at most {limit} allowed. The guard that failed: `{guard}`",
                    what=what, count=counter.frame_count, limit=at_most, guard=failures[0])
    else:
        message = T("{what} was compiled {count} times; at most {limit} allowed.", what=what,
                    count=counter.frame_count, limit=at_most)
    raise Recompile(message, [RecompileDiagnostic(compiles=counter.frame_count, limit=at_most,
                                                  guard_failures=failures[:10])])
