"""grade() itself: oversized sources and a failing sandbox become reports, not exceptions."""

import pytest

from judge.parent.grading import RunnerDebt, grade
from judge.parent.job import MAX_SOURCE_BYTES
from judge.reports.report import Report, Verdict
from judge.shared.protocol import RunnerSays, kind_of
from sandbox.base import RunOutcome, Sandbox, SandboxError


class FailingSandbox(Sandbox):
    name = "failing"

    def run(self, job_json, limits, on_message=None, *, inbox=None, pool="default") -> RunOutcome:
        raise SandboxError("the worker pool is gone")


class SilentSandbox(Sandbox):
    name = "silent"

    def run(self, job_json, limits, on_message=None, *, inbox=None, pool="default") -> RunOutcome:
        return RunOutcome(exit_code=0, stdout='{"verdict": "ACCEPTED"}\n')


def test_sandbox_failure_is_an_internal_error_report(add_one):
    events = []
    report = grade(add_one, "def f(x):\n    return x + 1\n", sandbox=FailingSandbox(), on_event=events.append)
    assert report.verdict is Verdict.INTERNAL_ERROR
    assert "worker pool is gone" in report.diagnostics[0].message
    assert events[-1].type == "done" and events[-1].report == report


def test_a_run_that_says_nothing_is_never_accepted(add_one):
    report = grade(add_one, "def f(x):\n    return x + 1\n", sandbox=SilentSandbox())
    assert report.verdict is Verdict.INTERNAL_ERROR


def test_oversized_source_is_refused_before_running(add_one):
    report = grade(add_one, "#" * (MAX_SOURCE_BYTES + 1), sandbox=FailingSandbox())
    assert report.verdict is Verdict.LOAD_ERROR and "64 KiB" in report.summary


class FlakySandbox(Sandbox):
    """Fails to set up once, then runs like the plain subprocess backend."""

    name = "flaky"

    def __init__(self):
        from judge.parent.grading import make_sandbox

        self.inner, self.calls = make_sandbox("none"), 0

    def run(self, job_json, limits, on_message=None, *, inbox=None, pool="default") -> RunOutcome:
        self.calls += 1
        if pool == "runner" and self.calls <= 2:
            raise SandboxError("worker went stale")
        return self.inner.run(job_json, limits, on_message, inbox=inbox, pool=pool)


def test_a_set_up_failure_is_retried_once(add_one):
    sandbox = FlakySandbox()
    report = grade(add_one, "def f(x):\n    return x + 1\n", sandbox=sandbox)
    assert report.verdict is Verdict.ACCEPTED and sandbox.calls == 4  # a runner and a verifier, twice


class BrokenRunnerInterpreter(Sandbox):
    """The runner starts on an interpreter without site-packages (no pydantic, no torch): it dies before
    the learner's code could run. The verifier runs normally."""

    name = "broken-runner"

    def __init__(self, tmp_path):
        import sys

        from judge.child import PROGRAM
        from sandbox.subprocess_backend import SubprocessSandbox

        wrapper = tmp_path / "python-without-site"
        wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
        wrapper.chmod(0o755)
        self.good, self.broken = SubprocessSandbox(PROGRAM), SubprocessSandbox(PROGRAM, python=str(wrapper))

    def run(self, job_json, limits, on_message=None, *, inbox=None, pool="default") -> RunOutcome:
        chosen = self.broken if pool == "runner" else self.good
        return chosen.run(job_json, limits, on_message, inbox=inbox, pool=pool)


def test_a_runner_that_cannot_start_is_an_internal_error_never_the_learners(add_one, tmp_path):
    report = grade(add_one, "def f(x):\n    return x + 1\n", sandbox=BrokenRunnerInterpreter(tmp_path))
    assert report.verdict is Verdict.INTERNAL_ERROR
    assert "before your code ran" in report.summary and "exit()" not in report.summary
    assert "ModuleNotFoundError" in report.diagnostics[0].traceback


def test_a_report_says_when_torch_is_not_one_the_exercise_was_verified_on(add_one):
    elsewhere = add_one.model_copy(update={"verified_torch": ["0.0.1"]})
    report = grade(elsewhere, "def f(x):\n    return x + 1\n", sandbox=SilentSandbox())
    assert report.version_warning.startswith("add-one: verified on torch 0.0.1, running ")
    assert Report.model_validate_json(report.model_dump_json()).version_warning == report.version_warning


def _debt_after(*steps: tuple[str, dict]) -> bool:
    debt = RunnerDebt()
    for step, message in steps:
        if step == "relayed":
            debt.relayed(message)
        elif step == "release":
            debt.release()
        else:
            debt.said(kind_of(message, RunnerSays), message)
    return debt.owes()


LOADED = ("said", {"type": "loaded"})


@pytest.mark.parametrize("steps, owes", [
    ((), True),  # still importing the learner's file (a sleep at module level)
    ((LOADED,), False),  # loaded, waiting for the verifier's first request
    ((LOADED, ("relayed", {"id": 1})), True),  # running the learner's code for request 1
    ((LOADED, ("relayed", {"id": 1}), ("said", {"type": "response", "id": 2})), True),  # an answer to no request
    ((LOADED, ("relayed", {"id": 1}), ("said", {"type": "response", "id": 1})), False),
    ((LOADED, ("release", {})), True),  # released: it owes its exit (a thread that never ends is the learner's)
])
def test_a_runner_the_backstop_ends_is_the_learners_only_while_it_owes_the_grading(steps, owes):
    """A runner that sat idle with nothing owed was waiting for the verifier: its backstop is the judge's fault."""
    assert _debt_after(*steps) is owes
