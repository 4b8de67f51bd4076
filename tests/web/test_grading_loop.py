"""The graders' one loop (web/grading_loop.py), the same tests for both kinds of grader: the embedded queue (on
SQLite and on PostgreSQL) and `practice worker` (PostgreSQL only: it refuses SQLite, test_distributed.py).

Each test submits through the web app's queue and watches what the loop did: the order of store, `done` and the
listeners (the LMS grade passback), the retry rule, and the grader's own failure in both languages.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from judge.reports.report import Report
from tests.polling import wait_until
from tests.web.conftest import CORRECT, FIXTURE_COURSE, WRONG, FakeGrader, RunningWorker, wait_done
from web import gpu_wait
from web.app import create_app
from web.grading_loop import MAX_ATTEMPTS
from web.settings import Settings

URL = "/api/exercises/add-one/submissions"


class FlakyGrader(FakeGrader):
    """The fake grader; while `failing`, it raises as a grader whose sandbox died would (each try recorded); with
    `cpu_tier_only`, it grades as a grader without a GPU grades a GPU exercise: its CPU tier only
    (judge/shared/tiers.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = False
        self.cpu_tier_only = False
        self.tries: list[str] = []

    def __call__(self, submission, publish) -> Report:
        if self.failing:
            self.tries.append(submission.id)
            raise RuntimeError("the sandbox's worker died")
        report = super().__call__(submission, publish)
        if self.cpu_tier_only:
            report.tier = "cpu"
        return report


class Graders:
    """A web app and its graders of one kind: `embedded` (threads of the app) or `worker` (a `practice worker` in a
    thread, on the app's PostgreSQL). `told` records each listener call with what was true at that moment: the
    submission's stored status and how many `done` events had been published for it."""

    def __init__(self, kind: str, settings: Settings):
        self.kind, self.grader = kind, FlakyGrader()
        self.web = TestClient(create_app(settings, grade=self.grader if kind == "embedded" else None))
        self.worker = RunningWorker(settings, "w1", self.grader) if kind == "worker" else None
        self.told: list[tuple[str, str, str, int]] = []
        self._dones: dict[tuple[str, str], int] = {}
        self.events: list = []  # (submission id, event) published by the embedded queue

    def __enter__(self) -> Graders:
        self.web.__enter__()
        state = self.web.app.state
        if self.worker is None:
            self.loop = state.queue.loop
            hub_publish = state.hub.publish

            def publish(submission_id, event):  # the in-memory hub, counted
                self._dones[(submission_id, event.type)] = self._dones.get((submission_id, event.type), 0) + 1
                self.events.append((submission_id, event))
                hub_publish(submission_id, event)

            state.hub.publish = publish
        else:
            self.worker.__enter__()
            self.loop = self.worker.worker.loop
        self.loop.listeners.append(self._listener)
        return self

    def __exit__(self, *exc) -> None:
        if self.worker is not None:
            self.worker.__exit__(*exc)
        self.web.__exit__(*exc)

    @property
    def store(self):
        return self.web.app.state.store

    def dones(self, submission_id: str, kind: str = "done") -> int:
        """`done` (or `kind`) events published for the submission (the worker's are rows of the shared event log)."""
        if self.worker is None:
            return self._dones.get((submission_id, kind), 0)
        with self.store.engine.connect() as conn:
            return conn.scalar(text("SELECT count(*) FROM submission_events WHERE submission_id = :s "
                                    "AND event_json LIKE :kind"), {"s": submission_id, "kind": f'{{"type":"{kind}"%'})

    def _listener(self, learner_id: str, exercise_id: str) -> None:
        sid = self.store.history(learner_id, exercise_id, limit=1)[0].id
        self.told.append((learner_id, exercise_id, self.store.get(sid).status, self.dones(sid)))

    def submit(self, source: str) -> str:
        return self.web.post(URL, json={"source": source}).json()["id"]


@pytest.fixture(params=[
    pytest.param(("embedded", "sqlite"), id="embedded-sqlite"),
    pytest.param(("embedded", "postgresql"), id="embedded-postgresql", marks=pytest.mark.postgres),
    pytest.param(("worker", "postgresql"), id="worker-postgresql", marks=pytest.mark.postgres),
])
def graders(request, tmp_path):
    kind, database = request.param
    if database == "sqlite":
        url = f"sqlite:///{tmp_path / 'practice.db'}"
    else:
        url = request.getfixturevalue("postgres").create()
    settings = Settings(data_dir=tmp_path / "data", exercises_dir=FIXTURE_COURSE, database_url=url, sandbox="none",
                        allow_unsandboxed=True, workers=1, secret_key="test-secret", submissions_per_minute=50,
                        queue="embedded" if kind == "embedded" else "procrastinate", heartbeat_seconds=0.2,
                        stalled_after_seconds=1.0)
    with Graders(kind, settings) as made:
        yield made


def test_a_verdict_is_stored_then_published_then_told(graders):
    sid = graders.submit(WRONG)
    assert wait_done(graders.web, sid)["verdict"] == "WRONG_ANSWER"
    learner = graders.store.get(sid).learner_id
    wait_until(lambda: graders.told, what="the listener told")
    assert graders.told == [(learner, "add-one", "done", 1)]  # stored and `done` published before the LMS hears
    assert graders.grader.graded == [sid]


def test_the_graders_own_failure_is_stored_in_both_languages_and_never_told(graders):
    graders.grader.failing = True
    sid = graders.submit(CORRECT)
    body = wait_done(graders.web, sid)
    report = graders.store.get(sid).report()
    assert body["verdict"] == "INTERNAL_ERROR" and "RuntimeError: the sandbox's worker died" in report.stderr
    assert "not your fault" in report.summary
    assert "不是你的问题" in report.translations["zh"]["summary"]
    assert "不是你的问题" in graders.web.get(f"/api/submissions/{sid}?lang=zh").json()["report"]["summary"]
    assert graders.dones(sid) == 1
    assert graders.told == []  # not a verdict that counts: the LMS hears nothing


def test_a_submission_claimed_too_often_gets_internal_error_without_grading(graders):
    """Graders that kept dying on a submission (each claim counted): past MAX_ATTEMPTS it is not graded again."""
    sid = graders.store.add("stuck-learner", "add-one", CORRECT).id  # stored only: no queue has it yet
    with graders.store.engine.begin() as conn:
        conn.execute(text("UPDATE submissions SET attempts = :n WHERE id = :s"), {"n": MAX_ATTEMPTS, "s": sid})
    graders.web.app.state.queue.submit(sid)
    wait_until(lambda: graders.store.get(sid).status == "done", what="the submission done")
    row = graders.store.get(sid)
    assert (row.verdict, row.attempts, graders.grader.graded) == ("INTERNAL_ERROR", MAX_ATTEMPTS + 1, [])
    assert f"in {MAX_ATTEMPTS} attempts" in row.report().stderr
    assert graders.told == []


def test_a_duplicate_delivery_grades_nothing(graders):
    sid = graders.submit(CORRECT)
    wait_done(graders.web, sid)
    assert graders.loop.submission(sid) is None  # a second delivery of the finished submission
    row = graders.store.get(sid)
    assert (row.verdict, row.attempts, graders.grader.graded, graders.dones(sid)) == ("ACCEPTED", 1, [sid], 1)


def test_a_regrade_that_counts_is_stored_beside_the_first_and_told(graders):
    sid = graders.submit(CORRECT)
    wait_done(graders.web, sid)
    wait_until(lambda: graders.told, what="the live verdict told")
    (made,) = graders.web.app.state.queue.regrade("add-one", "a-newer-version")
    regrades = graders.web.app.state.regrades
    wait_until(lambda: regrades.get(made.id).status == "done", what="the regrade done")
    wait_until(lambda: len(graders.told) == 2, what="the regrade told")
    assert (regrades.get(made.id).verdict, graders.store.get(sid).verdict) == ("ACCEPTED", "ACCEPTED")
    assert graders.grader.graded == [sid, sid]


def test_a_regrade_the_grader_fails_is_tried_again_then_kept_aside(graders):
    sid = graders.submit(CORRECT)
    wait_done(graders.web, sid)
    wait_until(lambda: graders.told, what="the live verdict told")
    graders.grader.failing = True
    (made,) = graders.web.app.state.queue.regrade("add-one", "a-newer-version")
    regrades = graders.web.app.state.regrades
    wait_until(lambda: regrades.get(made.id).status == "done", what="the regrade kept aside")
    kept = regrades.get(made.id)
    assert (kept.verdict, kept.attempts, graders.grader.tries) == ("INTERNAL_ERROR", MAX_ATTEMPTS, [sid] * 3)
    assert regrades.newest_done([sid]) == {}  # never counts: the first verdict stands
    assert len(graders.told) == 1  # the live verdict only



def test_a_regrade_claimed_too_often_is_kept_aside_without_grading(graders):
    sid = graders.submit(CORRECT)
    wait_done(graders.web, sid)
    regrades = graders.web.app.state.regrades
    (made,) = regrades.request("add-one", "a-newer-version")  # stored only: no queue has it yet
    with graders.store.engine.begin() as conn:
        conn.execute(text("UPDATE regrades SET attempts = :n WHERE id = :r"), {"n": MAX_ATTEMPTS, "r": made.id})
    graders.web.app.state.queue.submit_regrade(made.id)
    wait_until(lambda: regrades.get(made.id).status == "done", what="the regrade kept aside")
    kept = regrades.get(made.id)
    assert (kept.verdict, graders.grader.graded) == ("INTERNAL_ERROR", [sid])
    assert f"in {MAX_ATTEMPTS} attempts" in kept.report().stderr and regrades.newest_done([sid]) == {}


def test_a_passed_cpu_tier_is_not_a_verdict_the_file_waits_for_a_gpu_told_its_place(graders):
    graders.grader.cpu_tier_only = True  # a grader without a GPU, on a GPU exercise: its CPU tier passes
    sid = graders.submit(CORRECT)
    wait_until(lambda: graders.dones(sid, "tier") == 1, what="the tier event")
    stored = graders.store.get(sid)
    # not done, not told, queued again for a GPU; the claim that graded the tier is not one of its attempts
    assert (stored.status, stored.verdict, stored.attempts, graders.told, graders.dones(sid)) == ("queued", None, 0,
                                                                                                  [], 0)
    if graders.worker is None:  # the embedded queue keeps it for a GPU grader, never grading it again here
        (tier,) = [e for s, e in graders.events if s == sid and e.type == "tier"]
        assert (tier.report.tier, tier.position, tier.wait_s) == ("cpu", 1, gpu_wait.PRIOR_S)  # none graded yet
    else:  # `practice worker` deferred it on the gpu queue
        with graders.store.engine.connect() as conn:
            queues = conn.scalars(text("SELECT queue_name FROM procrastinate_jobs WHERE args->>'submission_id' = :s "
                                       "AND status = 'todo'"), {"s": sid}).all()
        assert queues == ["gpu"]
    assert graders.grader.graded == [sid]
