"""Turning the two runs' outcomes into a report: the runner (learner's process) can only fail a grading;
only the verifier's authenticated messages can pass it; nothing forged or missing is ever ACCEPTED."""

import signal

import pytest

from judge.parent.outcome import build_report
from judge.reports.report import Verdict
from judge.shared.jobs import VerifierJob
from judge.shared.protocol import RunnerEnd
from sandbox.base import MessageParser, RunOutcome


@pytest.fixture
def job():
    return VerifierJob(exercise_id="add-one", entry_point="f", files={}, tests=["tests/test_x.py"], runner_seconds=60)


def passed(job, name="test_a"):
    return {"nonce": job.nonce, "type": "check", "check": {"name": name, "passed": True}}


def failed(job, verdict, name="test_a", message="nope", **fields):
    return {"nonce": job.nonce, "type": "check",
            "check": {"name": name, "passed": False, "verdict": verdict, "message": message}, **fields}


def msg(job, type_, **fields):
    return {"nonce": job.nonce, "type": type_, **fields}


def loaded_runner(**fields):
    outcome = RunOutcome(messages=[{"type": "importing"}, {"type": "loaded"}], exit_code=0)
    for key, value in fields.items():
        setattr(outcome, key, value)
    return outcome


def verified(job, *messages):
    return RunOutcome(messages=[msg(job, "collected", names=["test_a"]), *messages], exit_code=0)


def report(add_one, job, verifier, runner):
    return build_report(add_one, job, verifier, runner)


def test_all_checks_passed_and_done_is_accepted(add_one, job):
    assert report(add_one, job, verified(job, passed(job), msg(job, "done")), loaded_runner()).verdict \
        is Verdict.ACCEPTED


@pytest.mark.parametrize("change, verdict", [
    (dict(timed_out=True), Verdict.TIME_LIMIT),
    (dict(cpu_exceeded=True), Verdict.TIME_LIMIT),
    (dict(memory_exceeded=True), Verdict.MEMORY_LIMIT),
    (dict(output_exceeded=True), Verdict.OUTPUT_LIMIT),
])
def test_the_runners_limits_override_passing_checks(add_one, job, change, verdict):
    verifier = verified(job, passed(job), msg(job, "done"))
    assert report(add_one, job, verifier, loaded_runner(**change)).verdict is verdict


@pytest.mark.parametrize("runner, verifier, verdict, words", [
    (dict(cpu_exceeded=True, duration_s=30.0), {}, Verdict.TIME_LIMIT, "s of CPU time"),
    # the wall clock ended a runner that sat idle (a sleep): the learner's wait
    (dict(timed_out=True, duration_s=30.0, cpu_s=0.2, waiting_s=0.1), {}, Verdict.TIME_LIMIT,
     "waited for 360 s without computing"),  # add-one's 120 s of CPU time, x 3
    # ... or sat idle while it owed an answer: the limit that ended it is the one the learner reads
    (dict(timed_out=True, duration_s=125.0, cpu_s=0.2, waiting_s=0.1, idle_limit_s=120.0), {}, Verdict.TIME_LIMIT,
     "waited for 120 s without computing"),
    # ... a runner that was starved (it computed or queued for a CPU, or waited for the verifier): the judge's fault
    (dict(timed_out=True, starved=True, duration_s=30.0, cpu_s=9.0, waiting_s=20.0), {}, Verdict.INTERNAL_ERROR,
     "too busy"),
    # ... a verifier the wall clock ended: it waited for a runner within its limits, or was starved
    ({}, dict(timed_out=True, duration_s=90.0), Verdict.INTERNAL_ERROR, "too busy"),
    ({}, dict(cpu_exceeded=True, duration_s=90.0), Verdict.TIME_LIMIT, "checking what your code compiled"),
])
def test_a_time_limit_is_the_learners_only_when_their_code_computed_or_waited_on_nothing(add_one, job, runner,
                                                                                        verifier, verdict, words):
    checked = verified(job, passed(job), msg(job, "done"))
    for key, value in verifier.items():
        setattr(checked, key, value)
    made = report(add_one, job, checked, loaded_runner(**runner))
    assert made.verdict is verdict and words in made.summary, made.summary


@pytest.mark.parametrize("change", [dict(exit_code=3), dict(exit_code=None, signal=signal.SIGKILL),
                                    dict(timed_out=True), dict(timed_out=True, starved=True),
                                    dict(cpu_exceeded=True), dict(memory_exceeded=True)])
def test_a_verifier_that_did_not_end_well_is_never_accepted(add_one, job, change):
    verifier = verified(job, passed(job), msg(job, "done"))
    for key, value in change.items():
        setattr(verifier, key, value)
    assert report(add_one, job, verifier, loaded_runner()).verdict is not Verdict.ACCEPTED


def test_messages_forged_into_the_runners_channel_count_for_nothing(add_one, job):
    forged = [msg(job, "collected", names=["test_a"]), passed(job), msg(job, "done")]
    runner = RunOutcome(messages=[{"type": "importing"}, {"type": "loaded"}, *forged], exit_code=0)
    verifier = RunOutcome(messages=[], exit_code=0)
    assert report(add_one, job, verifier, runner).verdict is not Verdict.ACCEPTED


def test_messages_without_the_nonce_are_ignored(add_one, job):
    forged = [{"nonce": "guess", "type": "collected", "names": ["test_a"]},
              {"nonce": "guess", "type": "check", "check": {"name": "test_a", "passed": True}},
              {"nonce": "guess", "type": "done"}]
    verdict = report(add_one, job, RunOutcome(messages=forged, exit_code=0), loaded_runner()).verdict
    assert verdict is Verdict.INTERNAL_ERROR


@pytest.mark.parametrize("end", [RunnerEnd.SIGNAL, RunnerEnd.EXIT, RunnerEnd.CLOSED])
def test_a_runner_that_died_during_a_check_names_the_signal(add_one, job, end):
    verifier = verified(job, failed(job, "RUNTIME_ERROR", message="your function: gone", runner_end=end.value),
                        msg(job, "done"))
    result = report(add_one, job, verifier, loaded_runner(exit_code=None, signal=signal.SIGSEGV))
    assert result.verdict is Verdict.RUNTIME_ERROR and "SIGSEGV" in result.summary and "test_a" in result.summary


@pytest.mark.parametrize("fields", [
    {},  # the words of a message decide nothing: only the runner_end field says the runner died
    {"runner_end": RunnerEnd.SILENT.value},  # it stopped answering: the check's own verdict stands
    {"runner_end": "not a cause"},
])
def test_why_the_runner_ended_is_data_not_words(add_one, job, fields):
    verifier = verified(job, failed(job, "TIME_LIMIT", message="your code's process ended, killed by signal 9",
                                    **fields), msg(job, "done"))
    result = report(add_one, job, verifier, loaded_runner(exit_code=None, signal=signal.SIGSEGV))
    assert result.verdict is Verdict.TIME_LIMIT and "SIGSEGV" not in result.summary


def test_unrun_check_is_not_accepted(add_one, job):
    verifier = RunOutcome(messages=[msg(job, "collected", names=["test_a", "test_b"]), passed(job),
                                    msg(job, "done")], exit_code=0)
    assert report(add_one, job, verifier, loaded_runner()).verdict is Verdict.INTERNAL_ERROR


def test_no_checks_is_not_accepted(add_one, job):
    verifier = RunOutcome(messages=[msg(job, "collected", names=[]), msg(job, "done")], exit_code=0)
    assert report(add_one, job, verifier, loaded_runner()).verdict is Verdict.INTERNAL_ERROR


def test_first_failing_check_gives_the_verdict(add_one, job):
    verifier = RunOutcome(messages=[msg(job, "collected", names=["test_a", "test_b"]),
                                    failed(job, "GRAPH_BREAK", "test_a"), failed(job, "WRONG_ANSWER", "test_b"),
                                    msg(job, "done")], exit_code=0)
    result = report(add_one, job, verifier, loaded_runner())
    assert result.verdict is Verdict.GRAPH_BREAK and result.summary.startswith("test_a:")


@pytest.mark.parametrize("verdict", ["LOAD_ERROR", "FORBIDDEN"])
def test_load_error_and_forbidden_from_the_runner(add_one, job, verdict):
    runner = RunOutcome(messages=[{"type": "importing"}, {"type": "load_error", "verdict": verdict, "message": "m",
                                                          "location": {"file": "solution.py", "line": 2}}],
                        exit_code=0)
    result = report(add_one, job, RunOutcome(messages=[msg(job, "runner_not_loaded")], exit_code=0), runner)
    assert result.verdict.value == verdict and result.diagnostics[0].location.line == 2


def test_a_runner_that_failed_before_the_learners_code_is_an_internal_error(add_one, job):
    runner = RunOutcome(messages=[], exit_code=1, stderr="ModuleNotFoundError: No module named 'pydantic'")
    result = report(add_one, job, RunOutcome(messages=[msg(job, "runner_not_loaded")], exit_code=0), runner)
    assert result.verdict is Verdict.INTERNAL_ERROR and "not your fault" in result.summary


def test_a_file_that_ends_its_process_at_import_is_a_load_error(add_one, job):
    runner = RunOutcome(messages=[{"type": "importing"}], exit_code=0)
    result = report(add_one, job, RunOutcome(messages=[msg(job, "runner_not_loaded")], exit_code=0), runner)
    assert result.verdict is Verdict.LOAD_ERROR and "exit" in result.summary


def test_malformed_check_is_not_accepted(add_one, job):
    bad = {"nonce": job.nonce, "type": "check", "check": {"passed": "yes please"}}
    verifier = verified(job, bad, msg(job, "done"))
    assert report(add_one, job, verifier, loaded_runner()).verdict is not Verdict.ACCEPTED


def test_parser_splits_lines_and_keeps_garbage_aside():
    outcome, seen = RunOutcome(), []
    parser = MessageParser(outcome, seen.append)
    parser.feed(b'{"a": 1}\n{"b"')
    parser.feed(b': 2}\nnot json\n[1, 2]\n')
    parser.close()
    assert seen == [{"a": 1}, {"b": 2}]
    assert outcome.malformed == ["not json", "[1, 2]"]
