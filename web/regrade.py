"""Regrades: stored submissions graded again under an exercise's newer version, the first report kept.

A regrade row is made per (submission, fingerprint) and the unique index makes asking twice for the same
version a no-op: nothing is graded twice. A submission's verdict is its newest finished regrade's that counts
(a regrade the grader itself failed, INTERNAL_ERROR, is retried and then kept aside: web.grading_loop),
else its own; "before" is always the first report's. Rows are made (and, with Procrastinate, their jobs deferred) in
one transaction; graders take them after live submissions (`REGRADE_PRIORITY`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, CursorResult, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import sessionmaker

from judge.reports.report import Report, Verdict
from web.class_scope import in_class
from web.store import Submission, _aware
from web.tables import DONE, QUEUED, RUNNING, RegradeRow, SubmissionRow, now as _now

LIVE_PRIORITY, REGRADE_PRIORITY = 0, -10  # higher is taken first (Procrastinate's convention)
SCOPES = ("all", "latest")


@dataclass(frozen=True)
class Regrade:
    """A regrade, detached from the database session."""

    id: str
    submission_id: str
    exercise_id: str
    fingerprint: str
    reason: str
    requested_by: str
    status: str
    verdict: str | None
    report_json: str | None
    attempts: int
    created_at: datetime
    finished_at: datetime | None

    @classmethod
    def of(cls, row: RegradeRow) -> Regrade:
        return cls(row.id, row.submission_id, row.exercise_id, row.fingerprint, row.reason or "",
                   row.requested_by or "", row.status, row.verdict, row.report_json, row.attempts or 0,
                   _aware(row.created_at), _aware(row.finished_at))

    def report(self) -> Report | None:
        return Report.model_validate_json(self.report_json) if self.report_json else None


@dataclass(frozen=True)
class Change:
    """A submission whose verdict a regrade changed: the first report's verdict and the newest regrade's."""

    submission: Submission
    regrade: Regrade

    @property
    def before(self) -> str | None:
        return self.submission.verdict

    @property
    def after(self) -> str | None:
        return self.regrade.verdict


def _insert(connection: Connection):
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


class Regrades:
    """The regrades table; every method opens and closes its own session (thread-safe)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    def _candidates(self, s, exercise_id: str, class_id: str | None, latest: bool) -> list[SubmissionRow]:
        query = select(SubmissionRow).where(SubmissionRow.exercise_id == exercise_id, SubmissionRow.status == DONE)
        if class_id is not None:
            query = in_class(query, class_id)
        rows = list(s.scalars(query.order_by(SubmissionRow.created_at)))
        if latest:
            newest = {r.learner_id: r for r in rows}
            rows = sorted(newest.values(), key=lambda r: r.created_at)
        return rows

    def request(self, exercise_id: str, fingerprint: str, *, class_id: str | None = None, latest: bool = False,
                reason: str = "", requested_by: str = "",
                also: Callable[[Connection, Regrade], None] | None = None) -> list[Regrade]:
        """Make a regrade for each finished submission not yet graded under `fingerprint` (all of them, or each
        learner's latest); `also` runs for each new one in the same transaction. Returns the new ones only."""
        made: list[Regrade] = []
        with self._sessions() as s, s.begin():
            candidates = self._candidates(s, exercise_id, class_id, latest)
            done = set(s.scalars(select(RegradeRow.submission_id).where(
                RegradeRow.exercise_id == exercise_id, RegradeRow.fingerprint == fingerprint)))
            conn = s.connection()
            insert = _insert(conn)
            for row in candidates:
                if row.fingerprint == fingerprint or row.id in done:
                    continue
                values = dict(id=uuid.uuid4().hex, submission_id=row.id, exercise_id=exercise_id,
                              fingerprint=fingerprint, reason=reason[:2000], requested_by=requested_by[:64],
                              status=QUEUED, attempts=0, created_at=_now())
                inserted = conn.execute(insert(RegradeRow).values(**values).on_conflict_do_nothing(
                    index_elements=["submission_id", "fingerprint"]).returning(RegradeRow.id)).first()
                if inserted is not None:  # (psycopg gives no rowcount here)
                    regrade = Regrade.of(RegradeRow(**values, verdict=None, report_json=None, finished_at=None))
                    made.append(regrade)
                    if also is not None:
                        also(conn, regrade)
        return made

    def get(self, regrade_id: str) -> Regrade | None:
        with self._sessions() as s:
            row = s.get(RegradeRow, regrade_id)
            return Regrade.of(row) if row else None

    def mark_running(self, regrade_id: str) -> tuple[Regrade, Submission] | None:
        """Start an attempt: the regrade and its submission, or None when it is finished (or gone)."""
        with self._sessions() as s, s.begin():
            started: CursorResult = s.execute(update(RegradeRow).where(
                RegradeRow.id == regrade_id, RegradeRow.status != DONE).values(
                status=RUNNING, attempts=RegradeRow.attempts + 1))
            if started.rowcount != 1:
                return None
            row = s.get(RegradeRow, regrade_id)
            submission = s.get(SubmissionRow, row.submission_id)
            return (Regrade.of(row), Submission.of(submission)) if submission else None

    def finish(self, regrade_id: str, report: Report) -> bool:
        """Store the regrade's report unless one is stored already; True when this call stored it."""
        with self._sessions() as s, s.begin():
            result: CursorResult = s.execute(update(RegradeRow).where(
                RegradeRow.id == regrade_id, RegradeRow.status != DONE).values(
                status=DONE, verdict=report.verdict.value, report_json=report.model_dump_json(), finished_at=_now()))
            return result.rowcount == 1

    def retry(self, regrade_id: str) -> bool:
        """Queue a running regrade again (its grader failed); False when it is finished already."""
        with self._sessions() as s, s.begin():
            done: CursorResult = s.execute(update(RegradeRow).where(
                RegradeRow.id == regrade_id, RegradeRow.status != DONE).values(status=QUEUED))
            return done.rowcount == 1

    def requeue_unfinished(self) -> list[Regrade]:
        """Regrades left queued or running (a restart), oldest first, all queued again."""
        with self._sessions() as s, s.begin():
            s.execute(update(RegradeRow).where(RegradeRow.status == RUNNING).values(status=QUEUED))
            rows = s.scalars(select(RegradeRow).where(RegradeRow.status == QUEUED).order_by(RegradeRow.created_at))
            return [Regrade.of(r) for r in rows]

    def newest_done(self, submission_ids: list[str] | None = None, *, class_id: str | None = None,
                    learner_id: str | None = None) -> dict[str, Regrade]:
        """submission id -> its newest finished regrade that counts, for the class's (or the learner's, or these)
        submissions. A regrade the grader itself failed (INTERNAL_ERROR, kept aside) never counts: the verdict
        before it stays."""
        query = select(RegradeRow).join(SubmissionRow, SubmissionRow.id == RegradeRow.submission_id).where(
            RegradeRow.status == DONE, RegradeRow.verdict != Verdict.INTERNAL_ERROR.value)
        if class_id is not None:
            query = in_class(query, class_id)
        if learner_id is not None:
            query = query.where(SubmissionRow.learner_id == learner_id)
        if submission_ids is not None:
            query = query.where(RegradeRow.submission_id.in_(submission_ids))
        newest: dict[str, Regrade] = {}
        with self._sessions() as s:
            for row in s.scalars(query.order_by(RegradeRow.finished_at, RegradeRow.created_at)):
                newest[row.submission_id] = Regrade.of(row)
        return newest

    def waiting(self, class_id: str | None = None) -> dict[str, int]:
        """exercise id -> regrades queued or running (of the class's submissions)."""
        query = select(RegradeRow.exercise_id).join(SubmissionRow, SubmissionRow.id == RegradeRow.submission_id).where(
            RegradeRow.status != DONE)
        if class_id is not None:
            query = in_class(query, class_id)
        counts: dict[str, int] = {}
        with self._sessions() as s:
            for exercise_id in s.scalars(query):
                counts[exercise_id] = counts.get(exercise_id, 0) + 1
        return counts

    def changes(self, *, class_id: str | None = None, learner_id: str | None = None) -> list[Change]:
        """Submissions whose newest regrade's verdict differs from their first report's, newest regrade first."""
        newest = self.newest_done(class_id=class_id, learner_id=learner_id)
        if not newest:
            return []
        with self._sessions() as s:
            rows = s.scalars(select(SubmissionRow).where(SubmissionRow.id.in_(list(newest))))
            submissions = {r.id: Submission.of(r) for r in rows}
        changed = [Change(submissions[sid], r) for sid, r in newest.items()
                   if sid in submissions and r.verdict != submissions[sid].verdict]
        return sorted(changed, key=lambda c: (c.regrade.finished_at or c.regrade.created_at), reverse=True)
