"""Grading through Procrastinate on the same PostgreSQL: the web side (defer) and what both sides share.

A new submission's row and its job are written in one transaction, so a stored submission always has a
job and a job always has its submission. The job's queueing lock is the submission id: a second job for a
submission still waiting is refused. Workers (`web.worker`, `practice worker`) wake on LISTEN/NOTIFY.
See docs/architecture.md ("Several machines") for why Procrastinate.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy import Connection, select, text
from sqlalchemy.engine import Engine

from judge.report import ProgressEvent
from web import db
from web.queue import GradingQueue
from web.requirements import queue_for
from web.store import Store, Submission
from web.tables import BROWSER, GraderRow, now

log = logging.getLogger(__name__)
TASK = "grade_submission"
SEEN_WITHIN = timedelta(minutes=1)


def procrastinate_app(engine: Engine, **pool_args):
    """A Procrastinate app on the engine's database (its pool opens only when a worker opens the app)."""
    import procrastinate

    return procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=db.conninfo(engine.url),
                                                                     **pool_args))


def defer(app, connection: Connection, submission_id: str, queue: str) -> bool:
    """Defer the grading job on `connection`'s transaction; False when one is already waiting."""
    from procrastinate.exceptions import AlreadyEnqueued

    try:
        app.configure_task(TASK, queue=queue, queueing_lock=submission_id,
                           connection=connection.connection.driver_connection).defer(submission_id=submission_id)
    except AlreadyEnqueued:
        return False
    return True


def queue_depths(engine: Engine) -> dict[str, int]:
    """Jobs waiting for a worker, per queue (every queue listed, 0 when empty)."""
    from web.requirements import QUEUES

    with engine.connect() as conn:
        rows = conn.execute(text("SELECT queue_name, count(*) FROM procrastinate_jobs "
                                 "WHERE status = 'todo' GROUP BY queue_name"))
        return {**dict.fromkeys(QUEUES, 0), **{name: count for name, count in rows}}


def graders_seen(engine: Engine, within: timedelta = SEEN_WITHIN) -> list[dict]:
    """The workers that said they were alive within `within`, most recent first."""
    with engine.connect() as conn:
        rows = conn.execute(select(GraderRow).where(GraderRow.last_seen >= now() - within)
                            .order_by(GraderRow.last_seen.desc()))
        return [{"name": r.name, "host": r.host, "pid": r.pid, "queues": r.queues.split(","),
                 "concurrency": r.concurrency, "sandbox": r.sandbox, "last_seen": r.last_seen} for r in rows]


class ProcrastinateQueue(GradingQueue):
    """The web side: store and defer; grading happens in `practice worker` processes."""

    def __init__(self, store: Store, hub, course):
        self._store, self._hub, self._course = store, hub, course
        self._app = procrastinate_app(store.engine)

    def add(self, learner_id: str, exercise, source: str, origin: str = BROWSER) -> Submission:
        queue = queue_for(exercise)
        submission = self._store.add(learner_id, exercise.id, source,
                                     also=lambda conn, s: defer(self._app, conn, s.id, queue), origin=origin)
        self._hub.publish(submission.id, ProgressEvent(type="queued"))
        return submission

    def submit(self, submission_id: str) -> None:
        """Queue a stored submission again (refused quietly while one of its jobs is waiting)."""
        submission = self._store.get(submission_id)
        if submission is None:
            return
        exercise = self._course.get(submission.exercise_id)
        queue = queue_for(exercise) if exercise is not None else "cpu"
        with self._store.engine.begin() as conn:
            defer(self._app, conn, submission_id, queue)

    def depth(self) -> dict[str, int]:
        return queue_depths(self._store.engine)

    def graders(self) -> list[dict]:
        return graders_seen(self._store.engine)

    def start(self) -> None:
        """Nothing runs here: workers grade, and re-queue what a dead worker left (see `web.worker`)."""

    def stop(self) -> None:
        close = getattr(self._hub, "close", None)
        if close is not None:
            close()
