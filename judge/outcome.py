"""Turn what came out of the two sandboxed runs into a Report. Nothing from the sandbox is trusted.

Only the verifier's messages stamped with its nonce can make a check pass. The runner's outcome (the
learner's process) can only fail a grading: its limits, a load error it reports, or its death. A result
that is missing, malformed or incomplete is an error verdict, never ACCEPTED; a run that failed before
the learner's code started is INTERNAL_ERROR, never blamed on the learner.
"""

from __future__ import annotations

import signal as signal_module

from pydantic import ValidationError

from judge.i18n import T, in_code
from judge.report import (VERDICT_TEXT, CheckResult, CompilerView, CostSection, ErrorDiagnostic, Report, SourceLocation,
                          Verdict)
from sandbox.base import RunOutcome


def signal_name(number: int) -> str:
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return f"signal {number}"


def parse_checks(nonce: str, messages: list[dict]) -> tuple[list[CheckResult], dict]:
    """The valid check results and the other authenticated messages by type."""
    checks, other = [], {}
    for message in messages:
        if message.get("nonce") != nonce:
            continue
        kind = message.get("type")
        if kind == "check":
            try:
                checks.append(CheckResult.model_validate(message.get("check")))
            except ValidationError:
                other.setdefault("malformed", []).append(message)
        elif isinstance(kind, str) and kind != "runner_request":
            other.setdefault(kind, message)
    return checks, other


def _runner_messages(outcome: RunOutcome) -> dict:
    found = {}
    for message in outcome.messages:
        kind = message.get("type")
        if kind in ("importing", "loaded", "load_error", "internal_error") and kind not in found:
            found[kind] = message
    return found


def build_report(exercise, job, verifier: RunOutcome, runner: RunOutcome, sandbox_name: T | str = "") -> Report:
    """The report of one grading: the runner's limits and load errors first, then the verifier's checks."""
    checks, other = parse_checks(job.nonce, verifier.messages)
    report = Report(exercise_id=job.exercise_id, verdict=Verdict.INTERNAL_ERROR, summary="", checks=checks,
                    stdout=runner.stdout, stderr=runner.stderr, output_truncated=runner.output_exceeded,
                    duration_s=round(max(verifier.duration_s, runner.duration_s), 3), sandbox=sandbox_name)
    if exercise.trust == "self-checked":
        report.trust = "self-checked"
    if "compiler" in other:  # display only: a malformed view is left out, never a reason to fail
        try:
            report.compiler = CompilerView.model_validate(other["compiler"].get("view"))
        except ValidationError:
            pass
    if "cost" in other:  # display only, as the compiler's view
        try:
            report.cost = CostSection.model_validate(other["cost"].get("section"))
        except ValidationError:
            pass
    verdict, summary = _verdict(exercise.limits, checks, other, verifier, runner, report)
    report.verdict = verdict
    report.set_text("summary", summary or VERDICT_TEXT[verdict])
    return report


def _verdict(limit, checks, other, verifier, runner, report) -> tuple[Verdict, T | str]:
    said = _runner_messages(runner)
    if runner.timed_out or runner.cpu_exceeded:
        if runner.cpu_exceeded and not runner.timed_out:
            return Verdict.TIME_LIMIT, T("Time limit exceeded: your code used more than {seconds} s of CPU time. "
                                         "Look for an endless loop or a very slow step.",
                                         seconds=format(limit.cpu_limit, "g"))
        return Verdict.TIME_LIMIT, T("Time limit exceeded: your code ran for more than {seconds} s. Look for an "
                                     "endless loop or a very slow step.", seconds=format(limit.time_seconds, "g"))
    if runner.memory_exceeded:
        return Verdict.MEMORY_LIMIT, T("Memory limit exceeded: more than {mib} MiB.", mib=limit.memory_mb)
    if runner.output_exceeded:
        return Verdict.OUTPUT_LIMIT, T("Output limit exceeded: more than {kib} KiB printed; the output shown is "
                                       "cut.", kib=limit.output_kb)
    if "load_error" in said:
        message = said["load_error"]
        try:
            loc = SourceLocation.model_validate(message["location"]) if message.get("location") else None
        except (ValidationError, TypeError):
            loc = None
        verdict = Verdict.FORBIDDEN if message.get("verdict") == "FORBIDDEN" else Verdict.LOAD_ERROR
        text = str(message.get("message", ""))[:2000]
        zh = message.get("message_zh")  # the runner's own words: they can only describe its failure
        said_text = T("{en}", zh="{said}", en=text, said=str(zh)[:2000]) if isinstance(zh, str) and zh else text
        report.diagnostics.append(ErrorDiagnostic(exc_type=verdict.value, message=said_text, location=loc,
                                                  traceback=str(message.get("traceback", ""))[:4000]))
        return verdict, said_text
    if "importing" not in said:
        error = in_code(said.get("internal_error", {}).get("message", ""), 1000)
        report.diagnostics.append(ErrorDiagnostic(exc_type="InternalError", message=T(
            "the process for your code failed before your code ran: `{error}`", error=error),
            traceback=runner.stderr[-3000:]))
        return Verdict.INTERNAL_ERROR, T("Internal error: the judge failed before your code ran; this is not "
                                         "your fault. Please submit again.")
    if "loaded" not in said:
        if runner.signal:
            return Verdict.RUNTIME_ERROR, T("Your file crashed its process while being imported ({signal}).",
                                            signal=signal_name(runner.signal))
        return Verdict.LOAD_ERROR, T("Your file ended its process while being imported (exit code {code}); remove "
                                     "any exit() or os._exit() at module level.", code=runner.exit_code)
    if verifier.timed_out or verifier.cpu_exceeded:
        return Verdict.TIME_LIMIT, T("Time limit exceeded: checking what your code compiled took longer than "
                                     "allowed.")
    if verifier.memory_exceeded:
        return Verdict.MEMORY_LIMIT, T("Memory limit exceeded while checking what your code compiled.")
    if "internal_error" in other:
        report.diagnostics.append(ErrorDiagnostic(exc_type="InternalError",
                                                  message=str(other["internal_error"].get("message", ""))[:2000],
                                                  traceback=str(other["internal_error"].get("traceback", ""))[:4000]))
        return Verdict.INTERNAL_ERROR, ""
    first_failure = next((c for c in checks if not c.passed), None)
    names = other.get("collected", {}).get("names")
    if first_failure is not None:
        if runner.signal and _runner_died(first_failure):
            return Verdict.RUNTIME_ERROR, T("Your code crashed its process ({signal}) during check {check}.",
                                            signal=signal_name(runner.signal), check=first_failure.name)
        return first_failure.verdict or Verdict.WRONG_ANSWER, T(
            "{check}: {message}", check=first_failure.name,
            message=first_failure.text("message"))
    if "done" not in other:
        report.diagnostics.append(ErrorDiagnostic(exc_type="InternalError", message=T("the verifier did not finish"),
                                                  traceback=verifier.stderr[-3000:]))
        return Verdict.INTERNAL_ERROR, T("Internal error: grading did not finish; this is not your fault.")
    if not checks or names is None or sorted(c.name for c in checks) != sorted(names):
        return Verdict.INTERNAL_ERROR, T("Internal error: grading finished but not every check reported a result.")
    if verifier.exit_code not in (0, None) or verifier.signal or verifier.malformed or "malformed" in other:
        return Verdict.INTERNAL_ERROR, T("Internal error: the verifier's result channel carried malformed data or it "
                                         "failed at exit.")
    return Verdict.ACCEPTED, ""


def _runner_died(check: CheckResult) -> bool:
    return "process ended" in check.message or "killed by signal" in check.message
