"""Check failures that carry their verdict and diagnostics.

Raise these from hidden tests (or use the helpers that raise them). They subclass AssertionError so
that pytest treats them as test failures; a plain AssertionError counts as WRONG_ANSWER.
"""

from __future__ import annotations

from judge.reports.i18n import T
from judge.reports.report import Verdict
from judge.shared.protocol import RunnerEnd


class CheckFailure(AssertionError):
    """A failed check: `message` (a `judge.reports.i18n.T`, in both languages) is for the learner, `diagnostics` are
    report diagnostics."""

    verdict = Verdict.WRONG_ANSWER
    runner_end: RunnerEnd | None = None  # set when the runner's end failed the check (judge.remote.RunnerGone)

    def __init__(self, message: T | str, diagnostics: list | None = None, *, verdict: Verdict | None = None):
        super().__init__(str(message))
        self.message = message
        self.diagnostics = list(diagnostics or [])
        if verdict is not None:
            self.verdict = verdict


class WrongAnswer(CheckFailure):
    verdict = Verdict.WRONG_ANSWER
    compared = None  # what a failed comparison compared (judge.checks.numerics.Compared), where one raised it


class GraphBreak(CheckFailure):
    verdict = Verdict.GRAPH_BREAK


class Recompile(CheckFailure):
    verdict = Verdict.RECOMPILE


class CompileError(CheckFailure):
    verdict = Verdict.COMPILE_ERROR


class Forbidden(CheckFailure):
    verdict = Verdict.FORBIDDEN
    called = ""  # a graph the judge cannot check: the name of what it calls (judge.shared.ir.NotAllowed.called)
