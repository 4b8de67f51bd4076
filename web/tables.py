"""The database tables, declared once; `web/migrations/` creates and changes them (never `create_all`).

A test (`tests/web/test_db.py`) checks that the migrations at head produce exactly these tables.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import BigInteger, DateTime, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

QUEUED, RUNNING, DONE = "queued", "running", "done"
# SQLite numbers only INTEGER PRIMARY KEY columns by itself.
EventId = BigInteger().with_variant(Integer(), "sqlite")


def now() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    pass


class SubmissionRow(Base):
    """One submission; the truth about it (status, verdict) whichever process grades it."""

    __tablename__ = "submissions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(64), index=True)
    exercise_id: Mapped[str] = mapped_column(String(128))
    source: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default=QUEUED)
    verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    report_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Times a grader started on it (more than 1 after a grader died mid-grading), and the grader that finished it.
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    graded_by: Mapped[str | None] = mapped_column(String(128), nullable=True)

    __table_args__ = (Index("ix_learner_exercise", "learner_id", "exercise_id"), Index("ix_status", "status"))


class EventRow(Base):
    """A live progress event, kept so that any web process can replay it to a page that subscribes late."""

    __tablename__ = "submission_events"

    id: Mapped[int] = mapped_column(EventId, primary_key=True, autoincrement=True)
    submission_id: Mapped[str] = mapped_column(String(32), index=True)
    event_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class GraderRow(Base):
    """A `practice worker` process, as it last said it was alive (for /healthz)."""

    __tablename__ = "graders"

    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    queues: Mapped[str] = mapped_column(String(64))  # comma-separated
    concurrency: Mapped[int] = mapped_column(Integer)
    sandbox: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
