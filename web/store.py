"""Submissions, stored with SQLAlchemy before they are graded (SQLite by default, any URL accepted)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from sqlalchemy import DateTime, Index, String, Text, create_engine, func, select, update
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

from judge.report import Report, Verdict

QUEUED, RUNNING, DONE = "queued", "running", "done"
UNFINISHED = (QUEUED, RUNNING)


def _now() -> datetime:
    return datetime.now(timezone.utc)


class _Base(DeclarativeBase):
    pass


class SubmissionRow(_Base):
    __tablename__ = "submissions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(64), index=True)
    exercise_id: Mapped[str] = mapped_column(String(128))
    source: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default=QUEUED)
    verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    report_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (Index("ix_learner_exercise", "learner_id", "exercise_id"), Index("ix_status", "status"))


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

    @classmethod
    def of(cls, row: SubmissionRow) -> "Submission":
        return cls(row.id, row.learner_id, row.exercise_id, row.source, row.status, row.verdict,
                   row.report_json, _aware(row.created_at), _aware(row.finished_at))

    def report(self) -> Report | None:
        return Report.model_validate_json(self.report_json) if self.report_json else None


def _aware(value: datetime | None) -> datetime | None:
    # SQLite drops the timezone; every stored time is UTC.
    return value.replace(tzinfo=timezone.utc) if value is not None and value.tzinfo is None else value


class Store:
    """The submissions table; every method opens and closes its own session (thread-safe)."""

    def __init__(self, url: str):
        connect_args = {"check_same_thread": False, "timeout": 30} if url.startswith("sqlite") else {}
        self.engine = create_engine(url, connect_args=connect_args)
        _Base.metadata.create_all(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def close(self) -> None:
        self.engine.dispose()

    def _session(self) -> Session:
        return self._sessions()

    def add(self, learner_id: str, exercise_id: str, source: str) -> Submission:
        row = SubmissionRow(id=uuid.uuid4().hex, learner_id=learner_id, exercise_id=exercise_id,
                            source=source, status=QUEUED, created_at=_now())
        with self._session() as s, s.begin():
            s.add(row)
        return Submission.of(row)

    def get(self, submission_id: str) -> Submission | None:
        with self._session() as s:
            row = s.get(SubmissionRow, submission_id)
            return Submission.of(row) if row else None

    def mark_running(self, submission_id: str) -> None:
        with self._session() as s, s.begin():
            s.execute(update(SubmissionRow).where(SubmissionRow.id == submission_id).values(status=RUNNING))

    def finish(self, submission_id: str, report: Report) -> None:
        with self._session() as s, s.begin():
            s.execute(update(SubmissionRow).where(SubmissionRow.id == submission_id).values(
                status=DONE, verdict=report.verdict.value, report_json=report.model_dump_json(),
                finished_at=_now()))

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

    def states(self, learner_id: str) -> dict[str, str]:
        """exercise id -> 'solved' or 'attempted' for this learner (absent: not started)."""
        with self._session() as s:
            rows = s.execute(select(SubmissionRow.exercise_id, SubmissionRow.verdict)
                             .where(SubmissionRow.learner_id == learner_id))
            states: dict[str, str] = {}
            for exercise_id, verdict in rows:
                if verdict == Verdict.ACCEPTED.value:
                    states[exercise_id] = "solved"
                else:
                    states.setdefault(exercise_id, "attempted")
            return states

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

    def active(self, learner_id: str) -> Submission | None:
        with self._session() as s:
            row = s.scalar(select(SubmissionRow).where(
                SubmissionRow.learner_id == learner_id, SubmissionRow.status.in_(UNFINISHED)).limit(1))
            return Submission.of(row) if row else None

    def count(self) -> int:
        with self._session() as s:
            return s.scalar(select(func.count()).select_from(SubmissionRow)) or 0
