"""Graders in other processes, in one test process: the web app defers to Procrastinate, `web.worker.Worker`
grades from the same PostgreSQL; events cross from the worker to any web app through LISTEN/NOTIFY.

test_cluster.py does the same with real processes, kill -9 included.
"""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from tests.polling import wait_until
from tests.web.conftest import CORRECT, FIXTURE_COURSE, WRONG, FakeGrader, RunningWorker
from web.app import create_app
from web.errors import StartupError
from web.settings import Settings
from web.worker import Worker

pytestmark = pytest.mark.postgres
URL = "/api/exercises/add-one/submissions"


@pytest.fixture
def pg_settings(postgres, tmp_path) -> Settings:
    return Settings(data_dir=tmp_path / "data", exercises_dir=FIXTURE_COURSE, database_url=postgres.create(),
                    sandbox="none", allow_unsandboxed=True, workers=1, secret_key="test-secret",
                    submissions_per_minute=50, heartbeat_seconds=0.2, stalled_after_seconds=1.0)


def sse_events(client: TestClient, submission_id: str) -> list[tuple[str, str]]:
    """(type, data) of each event of the submission's stream, until `done`."""
    events, kind = [], None
    with client.stream("GET", f"/api/submissions/{submission_id}/events") as response:
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[len("event: "):]
            elif line.startswith("data: "):
                events.append((kind, line[len("data: "):]))
                if kind == "done":
                    break
    return events


def done(client: TestClient, submission_id: str) -> dict:
    return wait_until(lambda: (b := client.get(f"/api/submissions/{submission_id}").json())["status"] == "done"
                      and b, what=f"submission {submission_id} done")


def test_a_worker_grades_and_another_web_app_streams_the_live_events(pg_settings):
    with TestClient(create_app(pg_settings)) as web_a, TestClient(create_app(pg_settings)) as web_b, \
            RunningWorker(pg_settings, "w1") as worker:
        assert web_a.app.state.queue_kind == "procrastinate"
        worker.grader.gate.clear()  # hold the grading until web B listens
        created = web_a.post(URL, json={"source": CORRECT}).json()
        web_b.cookies.update(web_a.cookies)
        assert worker.grader.started.wait(10)
        threading.Timer(0.3, worker.grader.gate.set).start()
        events = sse_events(web_b, created["id"])
        body = done(web_a, created["id"])
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "queued" and "running" in kinds and kinds.count("check") == 2 and kinds[-1] == "done"
    assert body["verdict"] == "ACCEPTED"


def test_the_submission_row_and_its_job_are_one_transaction_and_a_second_job_is_refused(pg_settings):
    with TestClient(create_app(pg_settings)) as web:
        sid = web.post(URL, json={"source": WRONG}).json()["id"]
        queue = web.app.state.queue
        queue.submit(sid)  # the job is still waiting: the queueing lock refuses another
        with web.app.state.store.engine.connect() as conn:
            jobs = conn.execute(text("SELECT queue_name, status FROM procrastinate_jobs WHERE queueing_lock = :s"),
                                {"s": sid}).all()
        assert [tuple(j) for j in jobs] == [("cpu", "todo")]
        health = web.get("/healthz").json()
        assert (health["queue"], health["queue_depth"], health["queues"]) == ("procrastinate", 1, {"cpu": 1, "gpu": 0})
        assert health["workers"] == []


def test_a_failed_job_insert_leaves_no_submission(pg_settings, monkeypatch):
    import web.pg_queue

    def broken(*args, **kwargs):
        raise RuntimeError("queue unavailable")

    monkeypatch.setattr(web.pg_queue, "defer", broken)
    with TestClient(create_app(pg_settings), raise_server_exceptions=False) as web:
        assert web.post(URL, json={"source": CORRECT}).status_code == 500
        assert web.app.state.store.count() == 0


def test_healthz_lists_the_workers_seen(pg_settings):
    with TestClient(create_app(pg_settings)) as web, RunningWorker(pg_settings, "seen-1"):
        health = wait_until(lambda: (h := web.get("/healthz").json())["workers"] and h, what="worker seen")
    (seen,) = health["workers"]
    assert (seen["name"], seen["queues"], seen["concurrency"], seen["sandbox"]) == ("seen-1", ["cpu"], 1, "fake")


def test_a_stop_asked_before_the_worker_starts_or_while_it_starts_is_kept(pg_settings):
    """A stop that lands in a worker's start-up (before its loop runs, or while a pool hands out its first
    connection) still ends it: asked again until the worker ends, and never lost."""
    early = RunningWorker(pg_settings, "early")
    early.worker.stop()
    with early:
        pass  # __exit__ asserts the thread ended
    for _ in range(3):
        with RunningWorker(pg_settings, "starting") as starting:
            wait_until(lambda: starting.worker._procrastinate is not None, what="worker starting")


def test_a_job_of_a_silent_worker_goes_to_another_worker(pg_settings):
    """A worker that stops heartbeating mid-grading (kill -9, machine gone): its job is graded again."""
    with TestClient(create_app(pg_settings)) as web:
        sid = web.post(URL, json={"source": CORRECT}).json()["id"]
        engine = web.app.state.store.engine
        with engine.begin() as conn:  # a worker that took the job, then went silent 10 s ago
            dead = conn.scalar(text("INSERT INTO procrastinate_workers (last_heartbeat) "
                                    "VALUES (now() - interval '10 seconds') RETURNING id"))
            conn.execute(text("UPDATE procrastinate_jobs SET status = 'doing', worker_id = :w "
                              "WHERE queueing_lock = :s"), {"w": dead, "s": sid})
            conn.execute(text("UPDATE submissions SET status = 'running', attempts = 1, graded_by = 'dead' "
                              "WHERE id = :s"), {"s": sid})
        with RunningWorker(pg_settings, "alive") as alive:
            body = done(web, sid)
        assert body["verdict"] == "ACCEPTED" and alive.grader.graded == [sid]
        row = web.app.state.store.get(sid)
        assert (row.attempts, row.graded_by) == (2, "alive")


def test_a_late_or_duplicate_result_changes_nothing(pg_settings):
    from judge.reports.report import Report, Verdict

    with TestClient(create_app(pg_settings)) as web, RunningWorker(pg_settings, "w1") as worker:
        sid = web.post(URL, json={"source": CORRECT}).json()["id"]
        assert done(web, sid)["verdict"] == "ACCEPTED"
        store = web.app.state.store
        late = Report(exercise_id="add-one", verdict=Verdict.WRONG_ANSWER, summary="late")
        assert store.finish(sid, late, "late-worker") is False
        worker.worker.loop.submission(sid)  # a duplicate delivery of the finished job
        row = store.get(sid)
        assert (row.verdict, row.graded_by, row.attempts) == ("ACCEPTED", "w1", 1)
        assert worker.grader.graded == [sid]


def test_an_exercise_that_needs_cuda_goes_to_the_gpu_queue_only(pg_settings, tmp_path):
    import shutil

    from judge.parent.requirements import queue_for

    course = tmp_path / "gpu-course"
    shutil.copytree(FIXTURE_COURSE, course)
    toml = course / "add-one" / "exercise.toml"
    toml.write_text(toml.read_text().replace('id = "add-one"', 'id = "add-one"\nneeds_cuda = true', 1))
    settings = pg_settings.model_copy(update={"exercises_dir": course})
    with TestClient(create_app(settings)) as web:
        assert queue_for(web.app.state.course.get("add-one")) == "gpu"
        sid = web.post(URL, json={"source": CORRECT}).json()["id"]
        with RunningWorker(settings, "cpu-only") as cpu_worker:
            wait_until(lambda: web.get("/healthz").json()["workers"], what="cpu worker up")
            assert web.get("/healthz").json()["queues"] == {"cpu": 0, "gpu": 1}
        assert cpu_worker.grader.graded == []
        assert web.app.state.store.get(sid).status == "queued"


def test_a_gpu_worker_refuses_to_start_without_cuda(pg_settings, monkeypatch):
    monkeypatch.setattr("judge.parent.requirements.cuda_missing", lambda: "torch sees no CUDA device on this machine")
    with pytest.raises(StartupError, match="--queue gpu needs a CUDA device: torch sees no CUDA"):
        Worker(pg_settings.model_copy(update={"worker_queues": ["gpu"]}), grade=FakeGrader())


def test_a_worker_needs_postgresql(tmp_path):
    with pytest.raises(StartupError, match="needs the shared PostgreSQL database"):
        Worker(Settings(database_url=f"sqlite:///{tmp_path}/x.db"), grade=FakeGrader())


def test_a_result_and_its_done_event_are_stored_together(pg_settings):
    """A grader that dies while storing its result leaves the submission unfinished (graded again later), never
    finished with no `done` event for the streams that wait on it."""
    from web.grading_loop import GradingLoop
    from web.pg_events import PgEventHub

    class DiesAfterTheDoneEvent(PgEventHub):
        def publish_in(self, conn, submission_id, event):
            super().publish_in(conn, submission_id, event)
            if event.type == "done":
                raise RuntimeError("killed while storing the result")

    def stored_dones(engine, sid: str) -> int:
        with engine.connect() as conn:
            return conn.scalar(text("SELECT count(*) FROM submission_events WHERE submission_id = :s "
                                    "AND event_json LIKE '{\"type\":\"done\"%'"), {"s": sid})

    with TestClient(create_app(pg_settings)) as web:
        sid = web.post(URL, json={"source": CORRECT}).json()["id"]
        store = web.app.state.store
        with pytest.raises(RuntimeError, match="killed"):
            GradingLoop(store, DiesAfterTheDoneEvent(store.engine), FakeGrader(), "dies").submission(sid)
        assert (store.get(sid).status, stored_dones(store.engine, sid)) == ("running", 0)
        GradingLoop(store, PgEventHub(store.engine), FakeGrader(), "next").submission(sid)  # the job's retry
        row = store.get(sid)
        assert (row.status, row.verdict, row.graded_by) == ("done", "ACCEPTED", "next")
        assert stored_dones(store.engine, sid) == 1


def _finished_with_a_regrade(web, regrade_job: bool) -> tuple[str, str]:
    """A graded submission and a regrade of it; `regrade_job=False`: its row stored without a job (lost)."""
    from judge.reports.report import Report, Verdict
    from web.pg_queue import defer_regrade

    store, regrades = web.app.state.store, web.app.state.regrades
    sid = web.post(URL, json={"source": CORRECT}).json()["id"]
    with store.engine.begin() as conn:  # graded before any worker ran here: the live job is not in the way
        conn.execute(text("DELETE FROM procrastinate_jobs WHERE queueing_lock = :s"), {"s": sid})
    store.finish(sid, Report(exercise_id="add-one", verdict=Verdict.WRONG_ANSWER, summary="old", fingerprint="old"),
                 "earlier")
    app = web.app.state.queue._app
    (made,) = regrades.request("add-one", "new", also=(lambda conn, r: defer_regrade(app, conn, r.id, "cpu"))
                               if regrade_job else None)
    return sid, made.id


def test_a_regrade_whose_worker_died_is_regraded_by_another(pg_settings):
    """A regrade job taken by a worker that then went silent: the reaper gives it to a live worker."""
    with TestClient(create_app(pg_settings)) as web:
        sid, regrade_id = _finished_with_a_regrade(web, regrade_job=True)
        engine = web.app.state.store.engine
        with engine.begin() as conn:
            dead = conn.scalar(text("INSERT INTO procrastinate_workers (last_heartbeat) "
                                    "VALUES (now() - interval '10 seconds') RETURNING id"))
            conn.execute(text("UPDATE procrastinate_jobs SET status = 'doing', worker_id = :w "
                              "WHERE queueing_lock = :lock"), {"w": dead, "lock": f"regrade-{regrade_id}"})
            conn.execute(text("UPDATE regrades SET status = 'running', attempts = 1 WHERE id = :r"),
                         {"r": regrade_id})
        regrades = web.app.state.regrades
        with RunningWorker(pg_settings, "alive") as alive:
            wait_until(lambda: regrades.get(regrade_id).status == "done", what="the regrade done")
        regrade = regrades.get(regrade_id)
        assert (regrade.verdict, regrade.attempts, alive.grader.graded) == ("ACCEPTED", 2, [sid])
        assert web.app.state.store.get(sid).verdict == "WRONG_ANSWER"  # the first report is kept


def test_an_orphaned_regrade_row_is_queued_again_and_graded_once(pg_settings):
    """A regrade row left unfinished with no job at all (its job lost): the reaper defers one, once."""
    with TestClient(create_app(pg_settings)) as web:
        sid, regrade_id = _finished_with_a_regrade(web, regrade_job=False)
        engine = web.app.state.store.engine
        with engine.begin() as conn:  # older than the grace period, and left running by a worker gone for good
            conn.execute(text("UPDATE regrades SET status = 'running', attempts = 1, "
                              "created_at = now() - interval '1 minute' WHERE id = :r"), {"r": regrade_id})
        worker = Worker(pg_settings.model_copy(update={"worker_name": "reaper"}), grade=FakeGrader(), sandbox="fake")
        try:
            import asyncio

            async def reap_twice() -> tuple[int, int]:
                async with worker.app.open_async():
                    return await worker.reap(), await worker.reap()

            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(1) as own_thread:  # a loop of its own, whatever this thread is running
                first, second = own_thread.submit(asyncio.run, reap_twice()).result()
        finally:
            worker.close()
        assert (first, second) == (1, 0)  # the second pass sees the waiting job: nothing deferred twice
        with engine.connect() as conn:
            jobs = conn.execute(text("SELECT task_name, status, priority FROM procrastinate_jobs "
                                     "WHERE queueing_lock = :lock"), {"lock": f"regrade-{regrade_id}"}).all()
        assert [tuple(j) for j in jobs] == [("regrade_submission", "todo", -10)]
        regrades = web.app.state.regrades
        with RunningWorker(pg_settings, "alive") as alive:
            wait_until(lambda: regrades.get(regrade_id).status == "done", what="the regrade done")
        assert (regrades.get(regrade_id).verdict, alive.grader.graded) == ("ACCEPTED", [sid])


def test_an_orphaned_submission_is_queued_again(pg_settings):
    """A submission left unfinished whose job is gone: the reaper (with the queue open, as in a worker) defers one."""
    with TestClient(create_app(pg_settings)) as web:
        sid = web.post(URL, json={"source": CORRECT}).json()["id"]
        engine = web.app.state.store.engine
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM procrastinate_jobs WHERE queueing_lock = :s"), {"s": sid})
            conn.execute(text("UPDATE submissions SET created_at = now() - interval '1 minute' WHERE id = :s"),
                         {"s": sid})
        with RunningWorker(pg_settings, "alive") as alive:
            assert done(web, sid)["verdict"] == "ACCEPTED"
        assert alive.grader.graded == [sid]
