"""Fair GPU use: a learner's GPU-seconds an hour, and the refusal that says when the next GPU submission can go."""

from datetime import datetime, timedelta, timezone

import pytest
from fastapi import HTTPException

from judge.reports.report import Report, Verdict
from web import db
from web.admission import Admission
from web.gpu_budget import seconds_until_allowed
from web.settings import Settings
from web.store import Store

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)


def ago(minutes: float) -> datetime:
    return NOW - timedelta(minutes=minutes)


@pytest.mark.parametrize("spent, budget, wait", [
    ([], 60, 0),
    ([(ago(30), 59.0)], 60, 0),  # under the budget
    ([(ago(50), 30.0), (ago(10), 30.0)], 60, 10 * 60),  # at it: the oldest leaves the window in 10 minutes
    ([(ago(50), 10.0), (ago(40), 40.0), (ago(5), 20.0)], 60, 20 * 60),  # two must leave: the second's time
    ([(ago(70), 500.0), (ago(10), 30.0)], 60, 0),  # older than the hour: not counted
    ([(ago(59.9), 120.0)], 60, 6),  # one grading over the whole budget: until it leaves
])
def test_when_the_next_gpu_grading_is_possible(spent, budget, wait):
    assert seconds_until_allowed(spent, budget, now=NOW) == wait


@pytest.fixture
def store(database_url):
    engine = db.make_engine(database_url)
    yield Store(engine)
    engine.dispose()


def graded(store: Store, learner: str, exercise_id: str, seconds: float) -> None:
    submission = store.add(learner, exercise_id, "source")
    store.mark_running(submission.id)
    store.finish(submission.id, Report(exercise_id=exercise_id, verdict=Verdict.ACCEPTED, summary="ok",
                                       duration_s=seconds))


def test_a_learner_over_the_budget_is_refused_with_when_to_come_back(store):
    admission = Admission(Settings(gpu_seconds_per_hour=20, submissions_per_minute=100), store)
    graded(store, "ana", "triton-kernel", 12.5)
    graded(store, "ana", "cudagraph", 9.0)
    graded(store, "ana", "cpu-one", 500.0)  # a CPU exercise's grading costs no GPU time
    gpu = ["triton-kernel", "cudagraph"]
    with pytest.raises(HTTPException) as refused:
        admission.admit("ana", "10.0.0.1", lambda: store.add("ana", "cudagraph", "x"), gpu_exercises=gpu)
    assert refused.value.status_code == 429 and refused.value.headers["X-Practice-Refusal"] == "gpu-budget"
    wait = int(refused.value.headers["Retry-After"])
    assert 3590 <= wait <= 3600  # the first grading leaves the hour then, bringing 21.5 s under 20 s
    assert f"possible in {wait} s" in refused.value.detail and "20 GPU-seconds an hour" in refused.value.detail
    # The same learner's CPU submission, and another learner's GPU one, go through.
    assert admission.admit("ana", "10.0.0.1", lambda: store.add("ana", "cpu-one", "x")).exercise_id == "cpu-one"
    assert admission.admit("ben", "10.0.0.2", lambda: store.add("ben", "cudagraph", "x"),
                           gpu_exercises=gpu).exercise_id == "cudagraph"


def test_no_budget_by_default(store):
    admission = Admission(Settings(submissions_per_minute=100), store)
    graded(store, "ana", "triton-kernel", 5000.0)
    assert admission.admit("ana", "10.0.0.1", lambda: store.add("ana", "triton-kernel", "x"),
                           gpu_exercises=["triton-kernel"]).status == "queued"
