"""Turning a sandbox's outcome into a report: limits first, nothing forged or missing is ever ACCEPTED."""

import signal

import pytest

from judge.exercise import Limits
from judge.job import Job
from judge.outcome import build_report
from judge.report import Verdict
from sandbox.base import MessageParser, RunOutcome


@pytest.fixture
def job():
    return Job(exercise_id="x", entry_point="f", source="", files={}, tests=["tests/test_x.py"], limits=Limits())


def passed(job, name="test_a"):
    return {"nonce": job.nonce, "type": "check", "check": {"name": name, "passed": True}}


def failed(job, verdict, name="test_a"):
    return {"nonce": job.nonce, "type": "check",
            "check": {"name": name, "passed": False, "verdict": verdict, "message": "nope"}}


def msg(job, type_, **fields):
    return {"nonce": job.nonce, "type": type_, **fields}


def test_all_checks_passed_and_done_is_accepted(job):
    outcome = RunOutcome(messages=[msg(job, "collected", names=["test_a"]), passed(job), msg(job, "done")],
                         exit_code=0)
    assert build_report(job, outcome).verdict is Verdict.ACCEPTED


@pytest.mark.parametrize("change, verdict", [
    (dict(timed_out=True), Verdict.TIME_LIMIT),
    (dict(cpu_exceeded=True), Verdict.TIME_LIMIT),
    (dict(memory_exceeded=True), Verdict.MEMORY_LIMIT),
    (dict(output_exceeded=True), Verdict.OUTPUT_LIMIT),
    (dict(exit_code=3), Verdict.RUNTIME_ERROR),
    (dict(exit_code=None, signal=signal.SIGKILL), Verdict.RUNTIME_ERROR),
])
def test_limits_and_bad_exits_override_passing_checks(job, change, verdict):
    outcome = RunOutcome(messages=[msg(job, "collected", names=["test_a"]), passed(job), msg(job, "done")],
                         exit_code=0)
    for key, value in change.items():
        setattr(outcome, key, value)
    assert build_report(job, outcome).verdict is verdict


def test_missing_done_is_runtime_error_naming_the_exit(job):
    outcome = RunOutcome(messages=[msg(job, "collected", names=["test_a"]), passed(job)], exit_code=0)
    report = build_report(job, outcome)
    assert report.verdict is Verdict.RUNTIME_ERROR and "exit code 0" in report.summary


def test_crash_names_the_signal(job):
    outcome = RunOutcome(messages=[msg(job, "collected", names=["test_a", "test_b"]), passed(job)],
                         signal=signal.SIGSEGV)
    report = build_report(job, outcome)
    assert report.verdict is Verdict.RUNTIME_ERROR and "SIGSEGV" in report.summary and "test_b" in report.summary


def test_messages_without_the_nonce_are_ignored(job):
    forged = [{"nonce": "guess", "type": "collected", "names": ["test_a"]},
              {"nonce": "guess", "type": "check", "check": {"name": "test_a", "passed": True}},
              {"nonce": "guess", "type": "done"}]
    assert build_report(job, RunOutcome(messages=forged, exit_code=0)).verdict is Verdict.RUNTIME_ERROR


def test_unrun_check_is_not_accepted(job):
    outcome = RunOutcome(messages=[msg(job, "collected", names=["test_a", "test_b"]), passed(job),
                                   msg(job, "done")], exit_code=0)
    assert build_report(job, outcome).verdict is Verdict.INTERNAL_ERROR


def test_no_checks_is_not_accepted(job):
    outcome = RunOutcome(messages=[msg(job, "collected", names=[]), msg(job, "done")], exit_code=0)
    assert build_report(job, outcome).verdict is Verdict.INTERNAL_ERROR


def test_first_failing_check_gives_the_verdict(job):
    outcome = RunOutcome(messages=[msg(job, "collected", names=["test_a", "test_b"]),
                                   failed(job, "GRAPH_BREAK", "test_a"), failed(job, "WRONG_ANSWER", "test_b"),
                                   msg(job, "done")], exit_code=0)
    report = build_report(job, outcome)
    assert report.verdict is Verdict.GRAPH_BREAK and report.summary.startswith("test_a:")


def test_load_error_and_forbidden(job):
    diag = {"kind": "error", "exc_type": "SyntaxError", "message": "bad"}
    for verdict in ("LOAD_ERROR", "FORBIDDEN"):
        outcome = RunOutcome(messages=[msg(job, "load_error", verdict=verdict, message="m", diagnostic=diag),
                                       msg(job, "done")], exit_code=0)
        report = build_report(job, outcome)
        assert report.verdict.value == verdict and report.diagnostics[0].exc_type == "SyntaxError"


def test_malformed_check_is_not_accepted(job):
    bad = {"nonce": job.nonce, "type": "check", "check": {"passed": "yes please"}}
    outcome = RunOutcome(messages=[msg(job, "collected", names=["test_a"]), bad, msg(job, "done")], exit_code=0)
    assert build_report(job, outcome).verdict is not Verdict.ACCEPTED


def test_parser_splits_lines_and_keeps_garbage_aside():
    outcome, seen = RunOutcome(), []
    parser = MessageParser(outcome, seen.append)
    parser.feed(b'{"a": 1}\n{"b"')
    parser.feed(b': 2}\nnot json\n[1, 2]\n')
    parser.close()
    assert seen == [{"a": 1}, {"b": 2}]
    assert outcome.malformed == ["not json", "[1, 2]"]
