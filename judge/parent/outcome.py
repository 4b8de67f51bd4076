"""Turn what came out of the two sandboxed runs into a Report. Nothing from the sandbox is trusted.

Only the verifier's messages stamped with its nonce can make a check pass. The runner's outcome (the
learner's process) can only fail a grading: its limits, a load error it reports, or its death. A result
that is missing, malformed or incomplete is an error verdict, never ACCEPTED; a run that failed before
the learner's code started is INTERNAL_ERROR, never blamed on the learner.
"""

from __future__ import annotations

import signal as signal_module
from dataclasses import dataclass, field

from pydantic import ValidationError

from judge.reports.i18n import T, in_code
from judge.reports.report import (
    VERDICT_TEXT,
    CheckResult,
    CompilerView,
    CostSection,
    ErrorDiagnostic,
    Report,
    SourceLocation,
    Verdict,
    mark_repeats,
)
from judge.shared.protocol import RunnerEnd, RunnerSays, VerifierSays, kind_of
from sandbox.base import RunOutcome


def signal_name(number: int) -> str:
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass
class Verified:
    """What the verifier said, authenticated by its nonce: `checks` in order, `runner_ends` beside them (why the
    runner ended, for a check its end failed), the first message of each other kind, and malformed checks."""

    checks: list[CheckResult] = field(default_factory=list)
    runner_ends: list[RunnerEnd | None] = field(default_factory=list)
    first: dict[VerifierSays, dict] = field(default_factory=dict)
    malformed: list[dict] = field(default_factory=list)

    def said(self, kind: VerifierSays) -> dict | None:
        return self.first.get(kind)


def parse_check(message: dict) -> CheckResult | None:
    """The CheckResult of a `check` message, or None when it is malformed."""
    try:
        return CheckResult.model_validate(message.get("check"))
    except ValidationError:
        return None


def read_verifier(nonce: str, messages: list[dict]) -> Verified:
    """The verifier's messages stamped with `nonce`, sorted by kind; anything else counts for nothing."""
    verified = Verified()
    for message in messages:
        if message.get("nonce") != nonce:
            continue
        kind = kind_of(message, VerifierSays)
        if kind is VerifierSays.CHECK:
            check = parse_check(message)
            if check is None:
                verified.malformed.append(message)
                continue
            verified.checks.append(check)
            verified.runner_ends.append(RunnerEnd.of(message.get("runner_end")))
        elif kind is not None and kind is not VerifierSays.RUNNER_REQUEST:
            verified.first.setdefault(kind, message)
    return verified


def _runner_messages(outcome: RunOutcome) -> dict[RunnerSays, dict]:
    found: dict[RunnerSays, dict] = {}
    for message in outcome.messages:
        kind = kind_of(message, RunnerSays)
        if kind is not None and kind is not RunnerSays.RESPONSE:
            found.setdefault(kind, message)
    return found


def build_report(exercise, job, verifier: RunOutcome, runner: RunOutcome, sandbox_name: T | str = "") -> Report:
    """The report of one grading: the runner's limits and load errors first, then the verifier's checks."""
    verified = read_verifier(job.nonce, verifier.messages)
    checks = verified.checks
    mark_repeats(checks)  # one finding shown once, by every front-end
    report = Report(exercise_id=job.exercise_id, verdict=Verdict.INTERNAL_ERROR, summary="", checks=checks,
                    stdout=runner.stdout, stderr=runner.stderr, output_truncated=runner.output_exceeded,
                    duration_s=round(max(verifier.duration_s, runner.duration_s), 3), sandbox=sandbox_name)
    if exercise.trust == "self-checked":
        report.trust = "self-checked"
    compiler = verified.said(VerifierSays.COMPILER)
    if compiler is not None:  # display only: a malformed view is left out, never a reason to fail
        try:
            report.compiler = CompilerView.model_validate(compiler.get("view"))
        except ValidationError:
            pass
    cost = verified.said(VerifierSays.COST)
    if cost is not None:  # display only, as the compiler's view
        try:
            report.cost = CostSection.model_validate(cost.get("section"))
        except ValidationError:
            pass
    verdict, summary = _verdict(exercise.limits, verified, verifier, runner, report)
    report.verdict = verdict
    report.set_text("summary", summary or VERDICT_TEXT[verdict])
    return report


def starved_text(seconds: float) -> T:
    """A run the wall clock ended because the machine was too loaded, or that waited for the other run of its
    grading (the runner for the verifier's next request, the verifier for a runner within its limits): the judge's
    fault, never the learner's (sandbox.clock)."""
    return T("Internal error: the judge's machine was too busy to finish running your code in {seconds} s; this is "
             "not your fault. Please submit again.", seconds=format(round(seconds), "g"))


def _verdict(limit, verified: Verified, verifier, runner, report) -> tuple[Verdict, T | str]:
    said = _runner_messages(runner)
    checks = verified.checks
    if runner.cpu_exceeded:
        return Verdict.TIME_LIMIT, T("Time limit exceeded: your code used more than {seconds} s of CPU time. "
                                     "Look for an endless loop or a very slow step.",
                                     seconds=format(limit.cpu_limit, "g"))
    if runner.timed_out:
        if runner.starved:
            return Verdict.INTERNAL_ERROR, starved_text(runner.duration_s)
        return Verdict.TIME_LIMIT, T("Time limit exceeded: your code waited for {seconds} s without computing "
                                     "(a sleep, or a read that nothing answers). Remove the wait.",
                                     seconds=format(runner.idle_limit_s or limit.idle_limit, "g"))
    if runner.memory_exceeded:
        return Verdict.MEMORY_LIMIT, T("Memory limit exceeded: more than {mib} MiB.", mib=limit.memory_mb)
    if runner.output_exceeded:
        return Verdict.OUTPUT_LIMIT, T("Output limit exceeded: more than {kib} KiB printed; the output shown is "
                                       "cut.", kib=limit.output_kb)
    if RunnerSays.LOAD_ERROR in said:
        message = said[RunnerSays.LOAD_ERROR]
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
    if RunnerSays.IMPORTING not in said:
        error = in_code(said.get(RunnerSays.INTERNAL_ERROR, {}).get("message", ""), 1000)
        report.diagnostics.append(ErrorDiagnostic(exc_type="InternalError", message=T(
            "the process for your code failed before your code ran: `{error}`", error=error),
            traceback=runner.stderr[-3000:]))
        return Verdict.INTERNAL_ERROR, T("Internal error: the judge failed before your code ran; this is not "
                                         "your fault. Please submit again.")
    if RunnerSays.LOADED not in said:
        if runner.signal:
            return Verdict.RUNTIME_ERROR, T("Your file crashed its process while being imported ({signal}).",
                                            signal=signal_name(runner.signal))
        return Verdict.LOAD_ERROR, T("Your file ended its process while being imported (exit code {code}); remove "
                                     "any exit() or os._exit() at module level.", code=runner.exit_code)
    if verifier.timed_out:  # it waited for a runner that had not reached a limit of its own: the load's doing
        return Verdict.INTERNAL_ERROR, starved_text(verifier.duration_s)
    if verifier.cpu_exceeded:
        return Verdict.TIME_LIMIT, T("Time limit exceeded: checking what your code compiled took longer than "
                                     "allowed.")
    if verifier.memory_exceeded:
        return Verdict.MEMORY_LIMIT, T("Memory limit exceeded while checking what your code compiled.")
    internal = verified.said(VerifierSays.INTERNAL_ERROR)
    if internal is not None:
        report.diagnostics.append(ErrorDiagnostic(exc_type="InternalError",
                                                  message=str(internal.get("message", ""))[:2000],
                                                  traceback=str(internal.get("traceback", ""))[:4000]))
        return Verdict.INTERNAL_ERROR, ""
    failed = next((i for i, c in enumerate(checks) if not c.passed), None)
    names = (verified.said(VerifierSays.COLLECTED) or {}).get("names")
    if failed is not None:
        first_failure, ended = checks[failed], verified.runner_ends[failed]
        if runner.signal and ended is not None and ended.crashed:
            return Verdict.RUNTIME_ERROR, T("Your code crashed its process ({signal}) during check {check}.",
                                            signal=signal_name(runner.signal), check=first_failure.name)
        return first_failure.verdict or Verdict.WRONG_ANSWER, T(
            "{check}: {message}", check=first_failure.name,
            message=first_failure.text("message"))
    if verified.said(VerifierSays.DONE) is None:
        report.diagnostics.append(ErrorDiagnostic(exc_type="InternalError", message=T("the verifier did not finish"),
                                                  traceback=verifier.stderr[-3000:]))
        return Verdict.INTERNAL_ERROR, T("Internal error: grading did not finish; this is not your fault.")
    if not checks or names is None or sorted(c.name for c in checks) != sorted(names):
        return Verdict.INTERNAL_ERROR, T("Internal error: grading finished but not every check reported a result.")
    if verifier.exit_code not in (0, None) or verifier.signal or verifier.malformed or verified.malformed:
        return Verdict.INTERNAL_ERROR, T("Internal error: the verifier's result channel carried malformed data or it "
                                         "failed at exit.")
    return Verdict.ACCEPTED, ""



def grader_failed(exercise_id: str, detail: str) -> Report:
    """The report of a grading that the grader itself failed (an exception, graders that kept dying on it): an
    INTERNAL_ERROR in every language, `detail` kept for the operator in stderr."""
    return Report(exercise_id=exercise_id, verdict=Verdict.INTERNAL_ERROR,
                  summary=T("The judge failed on this submission; this is not your fault. Please submit again."),
                  stderr=detail[:2000])
