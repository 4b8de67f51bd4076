"""Loader runs: an artifact's bytes, sent by the verifier, loaded in a sandboxed run of their own.

The verifier may not load a pickle (its code would run in the verifier's process) and the runner's report of
loading one is the learner's to write. When the verifier asks (`VerifierSays.LOAD_ARTIFACT`, nonce-stamped: the
runner cannot ask), the trusted side makes a `LoaderJob` of the bytes, the verifier's inputs and the grader's own
modules, and runs the judge's program on it in the same sandbox as the runner, with the runner's limits, from a pool
of its own ("loader"); no learner file is in it (judge/loader_side/loader.py). The loader's one report, or how its
run ended without one, goes back to the verifier's stdin as `TrustedSays.ARTIFACT_LOADED`. A run is a sibling of the
verifier, never its child: it cannot reach the verifier's memory or files.
"""

from __future__ import annotations

import threading

from judge.shared import protocol
from judge.shared.jobs import LoaderJob
from judge.shared.protocol import LoaderSays, RunnerEnd, TrustedSays
from sandbox.base import Inbox, RunOutcome, Sandbox
from sandbox.limits import Limits

MAX_LOADS = 4  # loader runs one grading may ask for
MAX_INPUTS = 8
POOL = "loader"
KINDS = ("aot", "cache")  # LoaderJob.kind


def ended(outcome: RunOutcome | None, whose: str = "your code's process") -> dict:
    """How a sandboxed run ended, as `runner_gone`'s fields: a `RunnerEnd` cause, and in English."""
    if outcome is None:
        return {"cause": RunnerEnd.START.value, "reason": f"{whose} could not start"}
    if outcome.timed_out or outcome.cpu_exceeded:
        return {"cause": RunnerEnd.TIME.value, "reason": f"{whose} ran out of time"}
    if outcome.memory_exceeded:
        return {"cause": RunnerEnd.MEMORY.value, "reason": f"{whose} ran out of memory"}
    if outcome.output_exceeded:
        return {"cause": RunnerEnd.OUTPUT.value, "reason": f"{whose} printed too much"}
    if outcome.signal:
        return {"cause": RunnerEnd.SIGNAL.value, "signal": outcome.signal,
                "reason": f"{whose} was killed by signal {outcome.signal}"}
    return {"cause": RunnerEnd.EXIT.value, "exit_code": outcome.exit_code,
            "reason": f"{whose} ended (exit code {outcome.exit_code})"}


def job_of(request: dict) -> LoaderJob | None:
    """The loader's job for a verifier's `load_artifact` message, or None where it is not of that form."""
    artifact, inputs, modules = request.get("artifact"), request.get("inputs"), request.get("modules") or {}
    kind = request.get("artifact_kind") or "aot"
    if not (isinstance(artifact, str) and isinstance(inputs, list) and len(inputs) <= MAX_INPUTS
            and all(isinstance(x, dict) for x in inputs) and isinstance(modules, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in modules.items()) and kind in KINDS):
        return None
    return LoaderJob(kind=kind, artifact=artifact, inputs=inputs, modules=modules)


class Loads:
    """The loader runs of one grading, each in a thread of its own; `to_verifier` (the verifier's stdin) stays open
    until the runner has ended and no load is in flight."""

    def __init__(self, sandbox: Sandbox, limits: Limits, to_verifier: Inbox):
        self.sandbox, self.limits, self.to_verifier = sandbox, limits, to_verifier
        self._lock = threading.Lock()
        self._pending = self._asked = 0
        self._runner_ended = False
        self._threads: list[threading.Thread] = []

    def ask(self, request: dict) -> None:
        """Start the loader run the verifier asked for (or answer at once why there is none)."""
        ident = request.get("id")
        job = job_of(request)
        with self._lock:
            if self._runner_ended and not self._pending:
                return  # the verifier's stdin is closed: it reads the runner's end
            self._asked += 1
            if job is None or self._asked > MAX_LOADS:
                refused = "the judge's request to load an artifact was refused (malformed, or one too many)"
                self.to_verifier.send(protocol.message(TrustedSays.ARTIFACT_LOADED, id=ident, report=None,
                                                       end={"cause": RunnerEnd.PROTOCOL.value, "reason": refused}))
                return
            self._pending += 1
        thread = threading.Thread(target=self._load, args=(ident, job), name="grading-loader", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _load(self, ident, job: LoaderJob) -> None:
        reports: list[dict] = []

        def on_message(message: dict) -> None:
            if protocol.kind_of(message, LoaderSays) is LoaderSays.REPORT and not reports:
                reports.append({k: message[k] for k in LoaderSays.REPORT.fields if k in message})

        outcome = None
        try:
            outcome = self.sandbox.run(job.model_dump_json(), self.limits, on_message, pool=POOL)
        except Exception:  # noqa: BLE001 - the sandbox failed to start the run: the verifier is told so
            outcome = None
        finally:
            end = None if reports else ended(outcome, "the process loading the artifact")
            self.to_verifier.send(protocol.message(TrustedSays.ARTIFACT_LOADED, id=ident,
                                                   report=reports[0] if reports else None, end=end))
            with self._lock:
                self._pending -= 1
                close = self._runner_ended and not self._pending
            if close:
                self.to_verifier.close()

    def runner_ended(self) -> None:
        """The runner is gone (its `runner_gone` sent): close the verifier's stdin now, or after the last load."""
        with self._lock:
            self._runner_ended = True
            close = not self._pending
        if close:
            self.to_verifier.close()

    def join(self) -> None:
        for thread in list(self._threads):
            thread.join()
