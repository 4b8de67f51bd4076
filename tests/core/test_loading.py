"""Artifacts loaded for the trusted side (judge/parent/loading.py, judge/loader_side/loader.py): the verifier's
request becomes a sandboxed run of its own, in its own pool, whose job holds the bytes and no learner file; its one
report (or how it ended without one) goes back to the verifier; the verifier's stdin stays open while a load runs."""

import base64
import json
import threading

import pytest
import torch

from judge.loader_side import loader
from judge.parent.exercise import find_exercise
from judge.parent.grading import grade
from judge.parent.loading import MAX_LOADS, POOL, Loads
from judge.reports.report import Verdict
from judge.shared import protocol, wire
from judge.shared.jobs import LoaderJob
from judge.shared.paths import EXERCISES_DIR
from judge.shared.protocol import LoaderSays, RunnerEnd, TrustedSays, VerifierSays
from sandbox.base import Inbox, RunOutcome, Sandbox
from sandbox.limits import Limits

REPORT = {"outputs": [], "counters": {"frames": {}, "stats": {}}, "changed": []}


class LoaderSandbox(Sandbox):
    """Records each run; says `said` on its result channel, then ends with `outcome`."""

    name = "loader-fake"

    def __init__(self, said=(), outcome=None, gate: threading.Event | None = None):
        self.said, self.outcome, self.gate, self.runs = list(said), outcome or RunOutcome(exit_code=0), gate, []

    def run(self, job_json, limits, on_message=None, *, inbox=None, pool="default") -> RunOutcome:
        self.runs.append((json.loads(job_json), pool))
        if self.gate is not None:
            self.gate.wait(10)
        for message in self.said:
            on_message(message)
        return self.outcome


class Recorder(Inbox):
    def __init__(self):
        super().__init__()
        self.sent: list[dict] = []

    def send(self, message: dict) -> None:
        if not self.closed.is_set():
            self.sent.append(message)


def load_request(ident=1, **fields) -> dict:
    return {"nonce": "n", **protocol.message(VerifierSays.LOAD_ARTIFACT, id=ident, artifact="AAEC",
                                             inputs=[wire.encode_tensor(torch.ones(2))],
                                             modules={"grader_fn": "def fn(x):\n    return x\n"}), **fields}


def test_a_load_is_a_run_of_its_own_pool_with_the_bytes_and_no_learner_file():
    sandbox, inbox = LoaderSandbox(said=[protocol.message(LoaderSays.REPORT, **REPORT), {"type": "loader_report"}]), \
        Recorder()
    loads = Loads(sandbox, Limits(time_seconds=5, memory_mb=512), inbox)
    loads.ask(load_request())
    loads.join()
    [(job, pool)] = sandbox.runs
    assert pool == POOL and job["role"] == "loader" and job["artifact"] == "AAEC"
    assert "source" not in job and "public" not in job  # the bytes, the inputs, the grader's modules: nothing else
    [answer] = inbox.sent
    assert protocol.kind_of(answer, TrustedSays) is TrustedSays.ARTIFACT_LOADED
    assert answer["id"] == 1 and answer["report"] == REPORT and answer["end"] is None  # the first report only


@pytest.mark.parametrize(("outcome", "cause"), [
    (RunOutcome(exit_code=0), RunnerEnd.EXIT), (RunOutcome(timed_out=True), RunnerEnd.TIME),
    (RunOutcome(memory_exceeded=True), RunnerEnd.MEMORY), (RunOutcome(signal=9), RunnerEnd.SIGNAL)])
def test_a_loader_that_ends_without_a_report_is_told_with_its_end(outcome, cause):
    inbox = Recorder()
    loads = Loads(LoaderSandbox(said=[{"type": "internal_error", "message": "x"}], outcome=outcome), Limits(), inbox)
    loads.ask(load_request())
    loads.join()
    [answer] = inbox.sent
    assert answer["report"] is None and RunnerEnd.of(answer["end"]["cause"]) is cause


def test_a_malformed_request_or_one_too_many_runs_nothing():
    sandbox, inbox = LoaderSandbox(said=[protocol.message(LoaderSays.REPORT, **REPORT)]), Recorder()
    loads = Loads(sandbox, Limits(), inbox)
    loads.ask(load_request(artifact=7))  # not the bytes as text
    for ident in range(2, MAX_LOADS + 2):
        loads.ask(load_request(ident))
    loads.join()
    assert len(sandbox.runs) == MAX_LOADS - 1  # the malformed request counted among the loads asked for
    refused = [a for a in inbox.sent if a["report"] is None]
    assert len(refused) == 2 and all(RunnerEnd.of(a["end"]["cause"]) is RunnerEnd.PROTOCOL for a in refused)


def test_the_verifiers_stdin_stays_open_until_the_load_that_outlived_the_runner_answers():
    gate, inbox = threading.Event(), Recorder()
    loads = Loads(LoaderSandbox(said=[protocol.message(LoaderSays.REPORT, **REPORT)], gate=gate), Limits(), inbox)
    loads.ask(load_request())
    loads.runner_ended()
    assert not inbox.closed.is_set()
    gate.set()
    loads.join()
    assert inbox.closed.is_set() and inbox.sent[0]["report"] == REPORT


def test_bytes_that_are_no_artifact_do_not_load(tmp_path):
    job = LoaderJob(artifact=base64.b64encode(b"\x80\x04no artifact at all.").decode(),
                    inputs=[wire.encode_tensor(torch.ones(16, 32))])
    found = loader.load_and_call(job, tmp_path)
    assert set(found) == {"load_error"} and "Unpickling" in found["load_error"]


@pytest.mark.slow
def test_a_forged_report_with_the_tamper_check_blinded_is_not_accepted():
    """aot-compile-artifact's file that replaces build_and_serve in the runner and blinds the runner's tamper check
    (Snapshot.changed) was ACCEPTED while the runner's report of its fresh processes decided; now its bytes are
    loaded on the trusted side."""
    exercise = find_exercise(EXERCISES_DIR, "aot-compile-artifact")
    report = grade(exercise, exercise.read("wrong/forged_and_blind.py"), stop_after_first_failure=True)
    assert report.verdict is Verdict.WRONG_ANSWER, report.summary
    assert [c.name for c in report.checks if not c.passed][:1] == ["test_fresh_process_runs_it"]
