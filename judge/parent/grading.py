"""The one grading function every front-end calls: a runner and a verifier, the trusted side between them.

The runner (learner's code) and the verifier (hidden tests) run as two sandboxed processes. Neither can
reach the other: the verifier's requests and the runner's answers pass through here as JSON lines, and
only the verifier's own messages (stamped with its nonce) can make a check pass.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from judge.child import PROGRAM
from judge.parent import vec_isa
from judge.parent.exercise import Exercise
from judge.parent.job import make_jobs, source_too_large, verifier_limits
from judge.parent.loading import Loads, ended
from judge.parent.outcome import build_report, parse_check
from judge.reports.i18n import T
from judge.reports.report import ErrorDiagnostic, ProgressEvent, Report, Verdict
from judge.shared import draw, protocol, tiers
from judge.shared.installed import torch_version, version_warning
from judge.shared.protocol import RunnerSays, TrustedSays, VerifierSays
from sandbox.backends import UNISOLATED, get_sandbox
from sandbox.base import Inbox, RunOutcome, Sandbox, SandboxError

OnEvent = Callable[[ProgressEvent], None]




def sandbox_label(sandbox: Sandbox) -> T:
    """The backend as a report names it, in the learner's language (`Sandbox.facts()` fills it in)."""
    facts = {key: "?" for key in ("version", "pool", "cgroup", "uids", "cpus", "image", "runs")} | sandbox.facts()
    if sandbox.name == "none":
        return T("none (fresh processes, no isolation)")
    if sandbox.name == "local":
        return T("local (warm forked processes, no isolation, {pool} per pool)", **facts)
    if sandbox.name == "bwrap":
        return T("bwrap (bubblewrap {version}, {pool} warm workers, cgroup v{cgroup}, uids {uids}+, {cpus} CPU each)",
                 **facts)
    if sandbox.name == "docker":
        return T("docker (image {image}, {pool} warm containers, recycled after {runs} runs, uids {uids}+, "
                 "{cpus} CPU each)", **facts)
    return T.same(sandbox.describe())


def make_sandbox(name: str = "none", **options) -> Sandbox:
    """The sandbox backend `name` set up to run the judge's program."""
    program = PROGRAM
    # Unisolated backends share one C++ build cache (sandbox.limits.inductor_cache_dir) and have no layers.
    if name in UNISOLATED and not options.get("compile_cache"):  # a layer's build says it for itself
        program = PROGRAM.model_copy(update={"env": {**PROGRAM.env, **vec_isa.skip_check_env()}})
    return get_sandbox(name, program, **options)


def grade(exercise: Exercise, source: str, *, sandbox: Sandbox | None = None, on_event: OnEvent | None = None,
          filename: str = "solution.py", stop_after_first_failure: bool = False,
          measure_cost: bool | None = None, seed: int | None = None, tier: str | None = None,
          reuse_compiled: bool = True) -> Report:
    """Grade `source` against `exercise` and return the report; a failing submission is a normal report.

    `sandbox` is a `sandbox.Sandbox` made by `make_sandbox` (default: the unsandboxed subprocess backend, for
    local use); `on_event` receives live ProgressEvents ("running", one "check" per finished check, "done").
    `stop_after_first_failure`: the verifier ends at the first failing check (proofs of wrong solutions only).
    `measure_cost`: None gives the report a cost section where the exercise declares [cost]; True also measures one
    from its [contract] (on demand: judge.costs.spec.spec_for); False never.
    `seed`: the grading's draw (judge/shared/draw.py; default: this installation's secret, the exercise version and the
    source), recorded in the report; pass a report's seed to replay its grading.
    `tier`: "cpu" grades only the exercise's CPU tier (judge/shared/tiers.py), on the CPU, ending at its first failure.
    `reuse_compiled`: False makes every hidden test compile from a fresh state, also those that ask to share compile
    sessions (Ref.compile(reuse=True)): the same verdicts, at the cost of today's compiles (benchmarks compare both).
    """
    from judge.parent.fingerprint import exercise_versions

    sandbox = sandbox or make_sandbox("none")
    fingerprint, content = exercise_versions(exercise)
    emit = _stamped(fingerprint, on_event or (lambda event: None))
    too_large = source_too_large(source)
    if too_large is not None:
        report = _rejected(exercise, too_large)
        emit(ProgressEvent(type="done", report=report))
        return report
    emit(ProgressEvent(type="running"))
    seed = draw.grading_seed(content, source) if seed is None else seed
    started = time.monotonic()
    try:
        try:
            runner, verifier = _run_pair(exercise, source, filename, sandbox, emit, stop_after_first_failure,
                                         measure_cost, seed, tier, reuse_compiled)
        except SandboxError:
            # The sandbox failed before any code ran (e.g. a stale warm worker): safe to run once more.
            runner, verifier = _run_pair(exercise, source, filename, sandbox, emit, stop_after_first_failure,
                                         measure_cost, seed, tier, reuse_compiled)
    except SandboxError as exc:
        report = Report(exercise_id=exercise.id, verdict=Verdict.INTERNAL_ERROR, sandbox=sandbox_label(sandbox),
                        summary=T("Internal error: the sandbox failed before your code ran; please submit again."),
                        diagnostics=[ErrorDiagnostic(exc_type="SandboxError", message=str(exc)[:2000])])
        emit(ProgressEvent(type="done", report=report))
        return report
    runner_outcome, verifier_job, verifier_outcome = runner, verifier[0], verifier[1]
    verifier_outcome.duration_s = verifier_outcome.duration_s or time.monotonic() - started
    report = build_report(exercise, verifier_job, verifier_outcome, runner_outcome, sandbox_label(sandbox))
    from judge.costs import memo as cost_memo

    cost_memo.remember(exercise, verifier_job.cost, report.cost)
    report.torch_version = torch_version()
    report.version_warning = version_warning(exercise)
    report.seed = seed
    if tier is not None:
        report.tier = tier
        if report.accepted:
            report.set_text("summary", tiers.passed_cpu(len(report.checks)))
    emit(ProgressEvent(type="done", report=report))
    return report


def _stamped(fingerprint: str, emit: OnEvent) -> OnEvent:
    """`emit`, with the exercise's fingerprint set on the report of the `done` event (every path ends there)."""

    def stamped(event: ProgressEvent) -> None:
        if event.type == "done" and event.report is not None:
            event.report.fingerprint = fingerprint
        emit(event)

    return stamped


def _run_pair(exercise, source, filename, sandbox, emit, stop_after_first_failure=False,
              measure_cost=None, seed: int = 0, tier: str | None = None,
              reuse_compiled: bool = True) -> tuple[RunOutcome, tuple]:
    runner_job, verifier_job = make_jobs(exercise, source, filename, stop_after_first_failure, measure_cost, seed,
                                         tier, reuse_compiled)
    return run_jobs(runner_job, verifier_job, tiers.limits_for(exercise.limits, tier), sandbox, emit)


class RunnerDebt:
    """What the runner owes the grading now: its load status, an answer to a request relayed to it, or its exit once
    the verifier has released it. A runner that the wall-clock backstop ends while it owed nothing was waiting for
    the verifier's next request (the judge's slowness), not for its own code (sandbox.clock)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._loaded = self._released = False
        self._open: set = set()

    def relayed(self, request: dict) -> None:
        with self._lock:
            self._open.add(request.get("id"))

    def said(self, kind: RunnerSays | None, message: dict) -> None:
        with self._lock:
            if kind in (RunnerSays.LOADED, RunnerSays.LOAD_ERROR):
                self._loaded = True
            elif kind is RunnerSays.RESPONSE:
                self._open.discard(message.get("id"))

    def release(self) -> None:
        with self._lock:
            self._released = True

    def owes(self) -> bool:
        with self._lock:
            return not self._loaded or bool(self._open) or self._released


def run_jobs(runner_job, verifier_job, limits, sandbox: Sandbox, emit: OnEvent) -> tuple[RunOutcome, tuple]:
    """Run a runner job and a verifier job side by side in `sandbox`, relaying between them as a grading does:
    (runner outcome, (verifier job, verifier outcome)). `judge.parent.playground` runs the playground's jobs through
    it."""
    debt = RunnerDebt()
    to_runner, to_verifier = Inbox(owes=debt.owes), Inbox()
    loads = Loads(sandbox, limits, to_verifier)  # artifacts the verifier asks to load, each in a run of its own

    def from_runner(message: dict) -> None:
        # Only answers and load status are passed on; the verifier checks their form itself.
        kind = protocol.kind_of(message, RunnerSays)
        debt.said(kind, message)
        if kind in protocol.RELAYED:
            to_verifier.send({k: message[k] for k in message if k != "nonce"})

    def from_verifier(message: dict) -> None:
        if message.get("nonce") != verifier_job.nonce:
            return
        kind = protocol.kind_of(message, VerifierSays)
        if kind is VerifierSays.RUNNER_REQUEST and isinstance(message.get("request"), dict):
            debt.relayed(message["request"])
            to_runner.send(message["request"])
        elif kind is VerifierSays.LOAD_ARTIFACT:
            loads.ask(message)
        elif kind is VerifierSays.COLLECTED and isinstance(message.get("names"), list):
            emit(ProgressEvent(type="running", total_checks=len(message["names"])))
        elif kind is VerifierSays.CHECK:
            check = parse_check(message)
            if check is not None:
                emit(ProgressEvent(type="check", check=check))
        elif kind in (VerifierSays.DONE, VerifierSays.RUNNER_NOT_LOADED, VerifierSays.INTERNAL_ERROR,
                      VerifierSays.RUNNER_RELEASED):
            debt.release()
            to_runner.close()  # runner_released: the verifier needs no more answers (its cost section's own work)

    result: dict = {}

    def run_runner() -> None:
        try:
            outcome = sandbox.run(runner_job.model_dump_json(), limits, from_runner, inbox=to_runner, pool="runner")
            if outcome.timed_out and not debt.owes():
                outcome.starved = True  # it waited for the verifier's next request, not for its own code
            result["runner"] = outcome
        except BaseException as exc:  # noqa: BLE001 - re-raised in the grading thread
            result["runner_error"] = exc
        finally:
            to_verifier.send(protocol.message(TrustedSays.RUNNER_GONE, **_gone_message(result.get("runner"))))
            loads.runner_ended()  # its stdin closes once no load is in flight either

    thread = threading.Thread(target=run_runner, name="grading-runner", daemon=True)
    thread.start()
    try:
        verifier_outcome = sandbox.run(verifier_job.model_dump_json(), verifier_limits(limits),
                                       from_verifier, inbox=to_verifier, pool="verifier")
    finally:
        to_runner.close()
        thread.join()
        loads.join()
    if "runner_error" in result:
        raise result["runner_error"]
    return result["runner"], (verifier_job, verifier_outcome)


def _gone_message(outcome: RunOutcome | None) -> dict:
    """The fields of `runner_gone`: why the runner ended, as a `RunnerEnd` cause the verifier words
    (judge.remote.failures.gone_reason), and in English."""
    return ended(outcome)


def _rejected(exercise: Exercise, message: T) -> Report:
    return Report(exercise_id=exercise.id, verdict=Verdict.LOAD_ERROR, summary=message,
                  diagnostics=[ErrorDiagnostic(exc_type="LOAD_ERROR", message=message)])


__all__ = ["grade", "make_sandbox"]
