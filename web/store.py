"""Submissions, stored with SQLAlchemy before they are graded (SQLite by default, or PostgreSQL).

The database is the truth: a submission is stored (and, with a job queue, its job deferred) in one
transaction; `finish` stores the first report only, so a late or duplicate result changes nothing.
The schema comes from `web/migrations/` (`web.db.upgrade`); `Store` refuses a database not at head.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from sqlalchemy import Connection, CursorResult, func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from judge.reports.report import Report, Verdict
from web import db
from web.attempt_facts import facts_of
from web.tables import BROWSER, DONE, QUEUED, RUNNING, FactsRow, LearnerRow, RegradeRow, SubmissionRow, now as _now

UNFINISHED = (QUEUED, RUNNING)
__all__ = ["DONE", "QUEUED", "RUNNING", "UNFINISHED", "Store", "Submission", "ensure_learner"]


def ensure_learner(connection: Connection, learner_id: str) -> None:
    """Make the learner's row unless it exists (a cookie's first submission, or joining a class)."""
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    connection.execute(insert(LearnerRow).values(id=learner_id, created_at=_now())
                       .on_conflict_do_nothing(index_elements=["id"]))


@dataclass(frozen=True)
class Submission:
    """A stored submission, detached from the database session."""

    id: str
    learner_id: str
    exercise_id: str
    source: str
    status: str
    verdict: str | None
    report_json: str | None
    created_at: datetime
    finished_at: datetime | None
    attempts: int = 0
    graded_by: str | None = None
    origin: str = BROWSER  # browser, cli or notebook
    fingerprint: str | None = None
    note: str | None = None  # the learner's one-line note (web/timeline.py)

    @classmethod
    def of(cls, row) -> Submission:
        return cls(row.id, row.learner_id, row.exercise_id, row.source, row.status, row.verdict,
                   row.report_json, _aware(row.created_at), _aware(row.finished_at), row.attempts or 0,
                   row.graded_by, row.origin or BROWSER, row.fingerprint, row.note)

    def report(self) -> Report | None:
        return Report.model_validate_json(self.report_json) if self.report_json else None


def _aware(value: datetime | None) -> datetime | None:
    # SQLite drops the timezone; every stored time is UTC.
    return value.replace(tzinfo=timezone.utc) if value is not None and value.tzinfo is None else value


class Store:
    """The submissions table; every method opens and closes its own session (thread-safe)."""

    def __init__(self, url_or_engine: str | Engine):
        self.engine = db.make_engine(url_or_engine) if isinstance(url_or_engine, str) else url_or_engine
        db.require_current(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def close(self) -> None:
        self.engine.dispose()

    def _session(self) -> Session:
        return self._sessions()

    def add(self, learner_id: str, exercise_id: str, source: str,
            also: Callable[[Connection, Submission], None] | None = None, origin: str = BROWSER) -> Submission:
        """Store a new submission; `also` runs in the same transaction (a job queue defers its job there).
        `origin`: where it was sent from (web.tables.ORIGINS)."""
        row = SubmissionRow(id=uuid.uuid4().hex, learner_id=learner_id, exercise_id=exercise_id,
                            source=source, status=QUEUED, created_at=_now(), attempts=0, origin=origin)
        with self._session() as s, s.begin():
            ensure_learner(s.connection(), learner_id)
            s.add(row)
            s.flush()
            submission = Submission.of(row)
            if also is not None:
                also(s.connection(), submission)
        return submission

    def get(self, submission_id: str) -> Submission | None:
        with self._session() as s:
            row = s.get(SubmissionRow, submission_id)
            return Submission.of(row) if row else None

    def mark_running(self, submission_id: str, grader: str | None = None) -> Submission | None:
        """Start an attempt: the submission, or None when it is finished (or unknown) and needs no grading."""
        with self._session() as s, s.begin():
            done: CursorResult = s.execute(update(SubmissionRow).where(  # an UPDATE's result counts its rows
                SubmissionRow.id == submission_id, SubmissionRow.status != DONE).values(
                status=RUNNING, attempts=SubmissionRow.attempts + 1, graded_by=grader))
            if done.rowcount != 1:
                return None
            return Submission.of(s.get(SubmissionRow, submission_id))

    def wait_again(self, submission_id: str) -> None:
        """A running submission queued again for a later tier (judge/shared/tiers.py); the claim that passed the earlier
        tier does not count against its attempts."""
        with self._session() as s, s.begin():
            s.execute(update(SubmissionRow).where(SubmissionRow.id == submission_id, SubmissionRow.status == RUNNING)
                      .values(status=QUEUED, attempts=SubmissionRow.attempts - 1))

    def queued_ahead(self, submission: Submission, exercise_ids: Collection[str]) -> int:
        """Submissions of `exercise_ids` waiting, queued before `submission`."""
        with self._session() as s:
            return s.scalar(select(func.count()).select_from(SubmissionRow).where(
                SubmissionRow.exercise_id.in_(list(exercise_ids)), SubmissionRow.status == QUEUED,
                SubmissionRow.created_at < submission.created_at, SubmissionRow.id != submission.id)) or 0

    def recent_durations(self, exercise_ids: Collection[str], limit: int = 20) -> list[float]:
        """How long the last `limit` gradings of `exercise_ids` took (their reports' duration_s)."""
        with self._session() as s:
            texts = s.scalars(select(SubmissionRow.report_json).where(
                SubmissionRow.exercise_id.in_(list(exercise_ids)), SubmissionRow.status == DONE)
                .order_by(SubmissionRow.finished_at.desc()).limit(limit))
            return [Report.model_validate_json(t).duration_s for t in texts if t]

    def finish(self, submission_id: str, report: Report, grader: str | None = None,
               also: Callable[[Connection], None] | None = None) -> bool:
        """Store the report unless one is stored already; True when this call stored it, with the facts the timeline
        shows (web/attempt_facts.py). `also` runs in the same transaction when it does (a shared event log stores its
        `done` event there: both or neither)."""
        values = dict(status=DONE, verdict=report.verdict.value, report_json=report.model_dump_json(),
                      finished_at=_now(), fingerprint=report.fingerprint)
        if grader is not None:
            values["graded_by"] = grader
        with self._session() as s, s.begin():
            result: CursorResult = s.execute(update(SubmissionRow).where(
                SubmissionRow.id == submission_id, SubmissionRow.status != DONE).values(**values))
            if result.rowcount != 1:
                return False
            s.add(FactsRow(submission_id=submission_id, facts_json=facts_of(report).model_dump_json()))
            s.flush()
            if also is not None:
                also(s.connection())
            return True

    def set_note(self, learner_id: str, submission_id: str, note: str | None) -> bool:
        """Set the learner's note on their own submission (None clears it); False when the submission is not
        theirs (or unknown). The caller cleans the text (web.timeline.clean_note)."""
        with self._session() as s, s.begin():
            result: CursorResult = s.execute(update(SubmissionRow).where(
                SubmissionRow.id == submission_id, SubmissionRow.learner_id == learner_id).values(note=note))
            return result.rowcount == 1

    def unfinished(self) -> list[Submission]:
        """Queued or running submissions, oldest first: what a restart must grade again."""
        with self._session() as s:
            rows = s.scalars(select(SubmissionRow).where(SubmissionRow.status.in_(UNFINISHED))
                             .order_by(SubmissionRow.created_at))
            return [Submission.of(r) for r in rows]

    def requeue_unfinished(self) -> list[Submission]:
        with self._session() as s, s.begin():
            s.execute(update(SubmissionRow).where(SubmissionRow.status == RUNNING).values(status=QUEUED))
        return self.unfinished()

    def history(self, learner_id: str, exercise_id: str, limit: int = 50) -> list[Submission]:
        with self._session() as s:
            rows = s.scalars(select(SubmissionRow).where(
                SubmissionRow.learner_id == learner_id, SubmissionRow.exercise_id == exercise_id)
                .order_by(SubmissionRow.created_at.desc()).limit(limit))
            return [Submission.of(r) for r in rows]

    def regraded_verdicts(self, learner_id: str) -> dict[str, str]:
        """submission id -> the verdict of its newest finished regrade that counts (not the grader's own failure,
        INTERNAL_ERROR: web.regrade), for this learner's regraded submissions."""
        with self._session() as s:
            rows = s.execute(select(RegradeRow.submission_id, RegradeRow.verdict).join(
                SubmissionRow, SubmissionRow.id == RegradeRow.submission_id).where(
                SubmissionRow.learner_id == learner_id, RegradeRow.status == DONE,
                RegradeRow.verdict != Verdict.INTERNAL_ERROR.value).order_by(RegradeRow.finished_at))
            return {sid: verdict for sid, verdict in rows}

    def states(self, learner_id: str) -> dict[str, str]:
        """exercise id -> 'solved' or 'attempted' for this learner, after regrades (absent: not started)."""
        regraded = self.regraded_verdicts(learner_id)
        with self._session() as s:
            rows = s.execute(select(SubmissionRow.id, SubmissionRow.exercise_id, SubmissionRow.verdict)
                             .where(SubmissionRow.learner_id == learner_id))
            states: dict[str, str] = {}
            for sid, exercise_id, verdict in rows:
                verdict = regraded.get(sid, verdict)
                if verdict == Verdict.ACCEPTED.value:
                    states[exercise_id] = "solved"
                else:
                    states.setdefault(exercise_id, "attempted")
            return states

    def first_solved(self, learner_id: str, regraded: dict | None = None) -> dict[str, datetime]:
        """exercise id -> when the learner's first ACCEPTED submission was made (after regrades: `regraded` maps a
        submission id to its newest regrade)."""
        regraded = regraded or {}
        with self._session() as s:
            rows = s.execute(select(SubmissionRow.id, SubmissionRow.exercise_id, SubmissionRow.verdict,
                                    SubmissionRow.created_at).where(SubmissionRow.learner_id == learner_id)
                             .order_by(SubmissionRow.created_at))
            solved: dict[str, datetime] = {}
            for sid, exercise_id, verdict, created_at in rows:
                verdict = regraded[sid].verdict if sid in regraded else verdict
                if verdict == Verdict.ACCEPTED.value:
                    solved.setdefault(exercise_id, _aware(created_at))
            return solved

    def has_accepted(self, learner_id: str, exercise_id: str) -> bool:
        with self._session() as s:
            return s.scalar(select(SubmissionRow.id).where(
                SubmissionRow.learner_id == learner_id, SubmissionRow.exercise_id == exercise_id,
                SubmissionRow.verdict == Verdict.ACCEPTED.value).limit(1)) is not None

    def recent(self, learner_id: str, window: timedelta) -> list[datetime]:
        """Creation times of this learner's submissions within `window`, oldest first."""
        with self._session() as s:
            rows = s.scalars(select(SubmissionRow.created_at).where(
                SubmissionRow.learner_id == learner_id, SubmissionRow.created_at >= _now() - window)
                .order_by(SubmissionRow.created_at))
            return [_aware(t) for t in rows]

    def graded_seconds(self, learner_id: str, exercise_ids: Collection[str], window: timedelta) -> list[
            tuple[datetime, float]]:
        """(finished at, grading seconds) of this learner's graded submissions to `exercise_ids` within `window`,
        oldest first (the seconds: each report's duration)."""
        with self._session() as s:
            rows = s.execute(select(SubmissionRow.finished_at, SubmissionRow.report_json).where(
                SubmissionRow.learner_id == learner_id, SubmissionRow.exercise_id.in_(list(exercise_ids)),
                SubmissionRow.status == DONE, SubmissionRow.finished_at >= _now() - window)
                .order_by(SubmissionRow.finished_at)).all()
        return [(_aware(at), float(json.loads(report or "{}").get("duration_s") or 0.0)) for at, report in rows]

    def active(self, learner_id: str) -> Submission | None:
        with self._session() as s:
            row = s.scalar(select(SubmissionRow).where(
                SubmissionRow.learner_id == learner_id, SubmissionRow.status.in_(UNFINISHED)).limit(1))
            return Submission.of(row) if row else None

    def still_queued(self, ids: Collection[str]) -> set[str]:
        """Those of `ids` still waiting for a grader."""
        with self._session() as s:
            return set(s.scalars(select(SubmissionRow.id).where(SubmissionRow.id.in_(list(ids)),
                                                                SubmissionRow.status == QUEUED)))

    def count(self, status: str | None = None) -> int:
        """Submissions stored (with `status`: in that status)."""
        query = select(func.count()).select_from(SubmissionRow)
        if status is not None:
            query = query.where(SubmissionRow.status == status)
        with self._session() as s:
            return s.scalar(query) or 0
