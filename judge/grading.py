"""The one grading function every front-end calls."""

from __future__ import annotations

import time
from typing import Callable

import torch

from judge.exercise import Exercise
from judge.job import make_job
from judge.outcome import build_report, parse_checks
from judge.report import CheckResult, ErrorDiagnostic, ProgressEvent, Report, Verdict
from sandbox.base import SandboxError

MAX_SOURCE_BYTES = 64 * 1024
OnEvent = Callable[[ProgressEvent], None]


def grade(exercise: Exercise, source: str, *, sandbox=None, on_event: OnEvent | None = None,
          filename: str = "solution.py") -> Report:
    """Grade `source` against `exercise` and return the report; a failing submission is a normal report.

    `sandbox` is a `sandbox.Sandbox` (default: the unsandboxed subprocess backend, for local use);
    `on_event` receives live ProgressEvents ("running", one "check" per finished check, "done").
    """
    if sandbox is None:
        from sandbox.subprocess_backend import SubprocessSandbox

        sandbox = SubprocessSandbox()
    emit = on_event or (lambda event: None)
    if len(source.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES:
        report = _rejected(exercise, f"Your file is larger than {MAX_SOURCE_BYTES // 1024} KiB; shorten it.")
        emit(ProgressEvent(type="done", report=report))
        return report
    job = make_job(exercise, source, filename)
    emit(ProgressEvent(type="running"))

    def on_message(message: dict) -> None:
        if message.get("nonce") != job.nonce:
            return
        if message.get("type") == "collected" and isinstance(message.get("names"), list):
            emit(ProgressEvent(type="running", total_checks=len(message["names"])))
        elif message.get("type") == "check":
            checks, _ = parse_checks(job, [message])
            if checks:
                emit(ProgressEvent(type="check", check=checks[0]))

    started = time.monotonic()
    try:
        try:
            outcome = sandbox.run(job.model_dump_json(), exercise.limits, on_message)
        except SandboxError:
            # The sandbox failed before the learner's code ran (e.g. a stale warm worker): safe to run once more.
            outcome = sandbox.run(job.model_dump_json(), exercise.limits, on_message)
    except SandboxError as exc:
        report = Report(exercise_id=exercise.id, verdict=Verdict.INTERNAL_ERROR, sandbox=sandbox.describe(),
                        summary="Internal error: the sandbox failed before your code ran; please submit again.",
                        diagnostics=[ErrorDiagnostic(exc_type="SandboxError", message=str(exc)[:2000])])
        emit(ProgressEvent(type="done", report=report))
        return report
    outcome.duration_s = outcome.duration_s or time.monotonic() - started
    report = build_report(job, outcome, sandbox.describe())
    report.torch_version = torch.__version__
    emit(ProgressEvent(type="done", report=report))
    return report


def _rejected(exercise: Exercise, message: str) -> Report:
    return Report(exercise_id=exercise.id, verdict=Verdict.LOAD_ERROR, summary=message,
                  diagnostics=[ErrorDiagnostic(exc_type="LOAD_ERROR", message=message)])


__all__ = ["grade", "CheckResult", "MAX_SOURCE_BYTES"]
