"""Count compiles and explain recompiles with the guard that failed."""

from __future__ import annotations

import torch

from judge.checks.failures import Recompile
from judge.compiler.recording import RecordingBackend
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
