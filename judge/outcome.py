"""Turn what came out of the sandbox into a Report. Nothing from the sandbox is trusted.

Messages without the job's nonce are ignored; a result that is missing, malformed or incomplete is
an error verdict, never ACCEPTED.
"""

from __future__ import annotations

import signal as signal_module

from pydantic import ValidationError

from judge.report import VERDICT_TEXT, CheckResult, ErrorDiagnostic, Report, Verdict
from sandbox.base import RunOutcome


def signal_name(number: int) -> str:
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return f"signal {number}"


def parse_checks(job, messages: list[dict]) -> tuple[list[CheckResult], dict]:
    """The valid check results and the other authenticated messages by type."""
    checks, other = [], {}
    for message in messages:
        if message.get("nonce") != job.nonce:
            continue
        kind = message.get("type")
        if kind == "check":
            try:
                checks.append(CheckResult.model_validate(message.get("check")))
            except ValidationError:
                other.setdefault("malformed", []).append(message)
        elif isinstance(kind, str):
            other.setdefault(kind, message)
    return checks, other


def build_report(job, outcome: RunOutcome, sandbox_name: str = "") -> Report:
    """The report for one run: limits first, then load errors, then a missing result, then the checks."""
    checks, other = parse_checks(job, outcome.messages)
    names = other.get("collected", {}).get("names")
    report = Report(exercise_id=job.exercise_id, verdict=Verdict.INTERNAL_ERROR, summary="", checks=checks,
                    stdout=outcome.stdout, stderr=outcome.stderr, output_truncated=outcome.output_exceeded,
                    duration_s=round(outcome.duration_s, 3), sandbox=sandbox_name)
    verdict, summary = _verdict(job, outcome, checks, other, names, report)
    report.verdict = verdict
    report.summary = summary or VERDICT_TEXT[verdict]
    return report


def _verdict(job, outcome, checks, other, names, report) -> tuple[Verdict, str]:
    limit = job.limits
    if outcome.timed_out or outcome.cpu_exceeded:
        kind = "CPU time" if outcome.cpu_exceeded and not outcome.timed_out else "time"
        seconds = limit.cpu_seconds or 2 * limit.time_seconds if kind == "CPU time" else limit.time_seconds
        return Verdict.TIME_LIMIT, f"Time limit exceeded: grading used more than {seconds:g} s of {kind}. " \
                                   "Look for an endless loop or a very slow step."
    if outcome.memory_exceeded:
        return Verdict.MEMORY_LIMIT, f"Memory limit exceeded: more than {limit.memory_mb} MiB."
    if outcome.output_exceeded:
        return Verdict.OUTPUT_LIMIT, f"Output limit exceeded: more than {limit.output_kb} KiB printed; " \
                                     "the output shown is cut."
    if "load_error" in other:
        message = other["load_error"]
        try:
            report.diagnostics.append(ErrorDiagnostic.model_validate(message.get("diagnostic")))
        except ValidationError:
            pass
        verdict = Verdict.FORBIDDEN if message.get("verdict") == "FORBIDDEN" else Verdict.LOAD_ERROR
        return verdict, str(message.get("message", ""))[:2000]
    if "internal_error" in other:
        report.diagnostics.append(ErrorDiagnostic(exc_type="InternalError",
                                                  message=str(other["internal_error"].get("message", ""))[:2000],
                                                  traceback=str(other["internal_error"].get("traceback", ""))[:4000]))
        return Verdict.INTERNAL_ERROR, ""
    first_failure = next((c for c in checks if not c.passed), None)
    if "done" not in other:
        if first_failure is not None and first_failure.verdict is Verdict.MEMORY_LIMIT:
            return Verdict.MEMORY_LIMIT, first_failure.message
        if outcome.signal:
            return Verdict.RUNTIME_ERROR, f"Your code crashed the grading process ({signal_name(outcome.signal)})" \
                                          + (" during check " + _next_check(names, checks) if names else "") + "."
        return Verdict.RUNTIME_ERROR, ("Grading did not finish: the process ended early "
                                       f"(exit code {outcome.exit_code}). Does your code call exit() or kill "
                                       "its own process?")
    if first_failure is not None:
        return first_failure.verdict or Verdict.WRONG_ANSWER, f"{first_failure.name}: {first_failure.message}"
    if not checks or names is None or sorted(c.name for c in checks) != sorted(names):
        return Verdict.INTERNAL_ERROR, "Grading finished but not every check reported a result."
    if outcome.exit_code not in (0, None) or outcome.signal:
        return Verdict.RUNTIME_ERROR, f"Every check passed but the process then failed (exit code " \
                                      f"{outcome.exit_code}, signal {outcome.signal})."
    if outcome.malformed or "malformed" in other:
        return Verdict.INTERNAL_ERROR, "The result channel carried malformed data."
    return Verdict.ACCEPTED, ""


def _next_check(names: list[str], checks: list[CheckResult]) -> str:
    done = {c.name for c in checks}
    return next((n for n in names if n not in done), "(after the last check)")
