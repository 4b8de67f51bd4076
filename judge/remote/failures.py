"""What a failure in the runner means for a check: the runner's reports of errors and of its end, as check failures.

The runner's words are untrusted data: each is cut short, and none of them can make a check pass.
"""

from __future__ import annotations

from judge.checks.failures import CheckFailure, CompileError, GraphBreak
from judge.compiler.breaks import explain_learner_error, graph_break_message
from judge.reports.i18n import T, in_code
from judge.reports.report import ErrorDiagnostic, GraphBreakDiagnostic, SourceLocation, Verdict
from judge.shared.protocol import ErrorKind, RunnerEnd

YOUR_FUNCTION = T("your function")
YOUR_MODULE = T("your module")


class RunnerGone(CheckFailure):
    """The runner ended (or stopped answering) before it answered; the trusted side knows why."""

    verdict = Verdict.RUNTIME_ERROR

    def __init__(self, message, runner_end: RunnerEnd, **kwargs):
        super().__init__(message, **kwargs)
        self.runner_end = runner_end  # why, as data: sent with the check it fails (judge.shared.protocol)


class LearnerError(CheckFailure):
    """The learner's code raised an exception in the runner."""

    verdict = Verdict.RUNTIME_ERROR


class Protocol(CheckFailure):
    """The runner answered something that is not of the protocol's form."""

    verdict = Verdict.RUNTIME_ERROR


class MalformedGraph(Protocol):
    """A graph the runner sent is not valid IR; `detail` says why (for a check that words it its own way)."""

    def __init__(self, message, detail: str, **kwargs):
        super().__init__(message, **kwargs)
        self.detail = detail


def gone_reason(message: dict) -> T:
    """Why the runner is gone, from the trusted side's `runner_gone` message (judge.parent.grading._gone_message)."""
    cause = RunnerEnd.of(message.get("cause"))
    if cause is RunnerEnd.START:
        return T("your code's process could not start")
    if cause is RunnerEnd.TIME:
        return T("your code ran out of time")
    if cause is RunnerEnd.MEMORY:
        return T("your code ran out of memory")
    if cause is RunnerEnd.OUTPUT:
        return T("your code printed too much")
    if cause is RunnerEnd.SIGNAL:
        return T("your code's process was killed by signal {signal}", signal=str(message.get("signal"))[:40])
    if cause is RunnerEnd.EXIT:
        return T("your code's process ended (exit code {code})", code=str(message.get("exit_code"))[:40])
    return T("your code's process ended")


def gone_end(message: dict) -> RunnerEnd:
    """The cause of a `runner_gone` message; one it does not name counts as the process having ended."""
    return RunnerEnd.of(message.get("cause")) or RunnerEnd.CLOSED


def runner_words(error: dict) -> T:
    """A message the runner wrote (its English, and its Chinese where it sent one); raw text otherwise."""
    message, zh = str(error.get("message", ""))[:2000], error.get("message_zh")
    if isinstance(zh, str) and zh:
        return T("{en}", zh="{said}", en=message, said=zh[:2000])
    return T("`{message}`", message=in_code(message))


def _location(data) -> SourceLocation | None:
    try:
        return SourceLocation.model_validate(data) if data else None
    except ValueError:
        return None


def first_lines(text: str, n: int = 4) -> str:
    """The first `n` lines of `text`, cut short: what a message quotes of an error."""
    return "\n".join(text.strip().splitlines()[:n])[:800]


def raise_learner_error(error: dict, what):
    """Turn the runner's description of a failure into the check failure it implies (never a pass).

    `what` (a T, or plain text such as code) names what was called, e.g. T("your function")."""
    if not isinstance(error, dict):
        raise Protocol(T("{what}: malformed error from your code's process", what=what))
    kind, message = error.get("kind"), str(error.get("message", ""))[:2000]
    loc = _location(error.get("location"))
    if kind == ErrorKind.GRAPH_BREAK:
        try:
            broke = GraphBreakDiagnostic.model_validate(error.get("diagnostic"))
        except ValueError:
            broke = GraphBreakDiagnostic(reason=message[:600], location=loc)
        raise GraphBreak(graph_break_message(broke, what), [broke])
    diag = ErrorDiagnostic(exc_type=str(error.get("type", "Error"))[:80], message=message, location=loc,
                           traceback=str(error.get("traceback", ""))[:4000])
    if kind == ErrorKind.COMPILE_ERROR:
        explanation = explain_learner_error(message)
        if explanation is not None and loc:
            raise CompileError(T("{what}: torch.compile failed at line {line} (`{code}`): {explanation}", what=what,
                                 line=loc.line, code=in_code(loc.text), explanation=explanation), [diag])
        if explanation is not None:
            raise CompileError(T("{what}: torch.compile failed: {explanation}", what=what,
                                 explanation=explanation), [diag])
        raise CompileError(T("{what}: torch.compile failed: `{error}: {detail}`", what=what,
                             error=in_code(diag.exc_type), detail=in_code(first_lines(message))), [diag])
    if kind == ErrorKind.MEMORY:
        raise CheckFailure(T("{what}: your code ran out of memory", what=what), [diag],
                           verdict=Verdict.MEMORY_LIMIT)
    if kind in (ErrorKind.PROTOCOL, ErrorKind.TOO_LARGE):
        raise Protocol(T("{what}: {message}", what=what, message=runner_words(error)))
    explanation = explain_learner_error(message, diag.traceback)
    if explanation is not None and loc:
        raise LearnerError(T("{what}: `{error}` at line {line} (`{code}`): {explanation}", what=what,
                             error=in_code(diag.exc_type), line=loc.line, code=in_code(loc.text),
                             explanation=explanation), [diag])
    if loc:
        raise LearnerError(T("{what}: `{error}` at line {line} (`{code}`): `{detail}`", what=what,
                             error=in_code(diag.exc_type), line=loc.line, code=in_code(loc.text),
                             detail=in_code(first_lines(message))), [diag])
    raise LearnerError(T("{what}: `{error}: {detail}`", what=what, error=in_code(diag.exc_type),
                         detail=in_code(first_lines(message))), [diag])
