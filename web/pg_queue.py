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

from judge.parent.requirements import first_queue, queue_for
from judge.reports.report import ProgressEvent
from web import db
from web.queue import GradingQueue
from web.store import Store, Submission
from web.tables import BROWSER, GraderRow, now

log = logging.getLogger(__name__)
TASK = "grade_submission"
REGRADE_TASK = "regrade_submission"
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


def defer_regrade(app, connection: Connection, regrade_id: str, queue: str) -> bool:
    """Defer a regrade's job on `connection`'s transaction at low priority (live submissions go first)."""
    from procrastinate.exceptions import AlreadyEnqueued

    from web.regrade import REGRADE_PRIORITY

    try:
        app.configure_task(REGRADE_TASK, queue=queue, queueing_lock=f"regrade-{regrade_id}", priority=REGRADE_PRIORITY,
                           connection=connection.connection.driver_connection).defer(regrade_id=regrade_id)
    except AlreadyEnqueued:
        return False
    return True


def queue_depths(engine: Engine) -> dict[str, int]:
    """Jobs waiting for a worker, per queue (every queue listed, 0 when empty)."""
    from judge.parent.requirements import QUEUES

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
        from web.regrade import Regrades

        self._store, self._hub, self._course = store, hub, course
        self._regrades = Regrades(store.engine)
        self._app = procrastinate_app(store.engine)
        self.listeners = []  # verdicts are stored by `practice worker`s, which tell their own listeners

    def _queue_of(self, exercise_id: str) -> str:
        exercise = self._course.get(exercise_id)
        return queue_for(exercise) if exercise is not None else "cpu"

    def regrade(self, exercise_id: str, fingerprint: str, **options):
        """The regrades' rows and their jobs in one transaction."""
        queue = self._queue_of(exercise_id)
        return self._regrades.request(exercise_id, fingerprint, **options,
                                      also=lambda conn, r: defer_regrade(self._app, conn, r.id, queue))

    def submit_regrade(self, regrade_id: str) -> None:
        regrade = self._regrades.get(regrade_id)
        if regrade is not None:
            with self._store.engine.begin() as conn:
                defer_regrade(self._app, conn, regrade_id, self._queue_of(regrade.exercise_id))

    def add(self, learner_id: str, exercise, source: str, origin: str = BROWSER, address: str = "") -> Submission:
        """Store and defer in one transaction; the jobs run in priority, then arrival, order (one per learner at a
        time: `web.admission`)."""
        queue = first_queue(exercise)
        submission = self._store.add(learner_id, exercise.id, source,
                                     also=lambda conn, s: defer(self._app, conn, s.id, queue), origin=origin)
        self._hub.publish(submission.id, ProgressEvent(type="queued"))
        return submission

    def submit(self, submission_id: str, learner_id: str = "", address: str = "") -> None:
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
