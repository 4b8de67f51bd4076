"""Deadlines per class and exercise, with per-learner extensions; on time or late is read from them.

A deadline only marks: submissions after it are graded as ever and shown late, unless the instructor chose
`refuse_late` for it, in which case a learner of that class whose own deadline (extension or not) has passed
gets a clear refusal, unless another class of theirs still takes the submission (one class refuses only for
itself). Times are stored in UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import sessionmaker

from web.errors import InputError
from web.i18n import N_
from web.store import _aware
from web.tables import DeadlineRow, ExtensionRow, MemberRow, now as _now

ON_TIME, LATE, MISSED, OPEN = "on_time", "late", "missed", "open"


@dataclass(frozen=True)
class Deadline:
    class_id: str
    exercise_id: str
    due_at: datetime
    refuse_late: bool


FIRST_YEAR, LAST_YEAR = 2000, 9998  # due times outside are typing mistakes (and near the ends, not representable)


def parse_due(text: str) -> datetime:
    """A due time from a form or the CLI: ISO 8601 ('2026-12-04T18:00', 'Z' or an offset; none means UTC), between
    the years FIRST_YEAR and LAST_YEAR; `InputError` otherwise."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        value = value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
    except ValueError:
        raise InputError(N_("Give the due time as YYYY-MM-DD HH:MM (UTC), e.g. 2026-12-04 18:00."),
                         value=text) from None
    except OverflowError:  # an offset that moves the time past year 1 or 9999
        value = datetime.min.replace(tzinfo=timezone.utc)
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise InputError(N_("Give a due time between the years {first} and {last}."), first=FIRST_YEAR,
                         last=LAST_YEAR)
    return value


def timing(due_at: datetime | None, solved_at: datetime | None, now: datetime | None = None) -> str | None:
    """on_time / late (solved before or after the due time), missed (unsolved past it), open, or None."""
    if due_at is None:
        return None
    if solved_at is not None:
        return ON_TIME if solved_at <= due_at else LATE
    return MISSED if (now or _now()) > due_at else OPEN


class Deadlines:
    """The deadlines and extensions tables; every method opens and closes its own session (thread-safe)."""

    def __init__(self, engine: Engine):
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    def set(self, class_id: str, exercise_id: str, due_at: datetime, refuse_late: bool = False) -> Deadline:
        with self._sessions() as s, s.begin():
            row = s.get(DeadlineRow, (class_id, exercise_id))
            if row is None:
                s.add(DeadlineRow(class_id=class_id, exercise_id=exercise_id, due_at=due_at, refuse_late=refuse_late))
            else:
                row.due_at, row.refuse_late = due_at, refuse_late
        return Deadline(class_id, exercise_id, due_at, refuse_late)

    def remove(self, class_id: str, exercise_id: str) -> None:
        with self._sessions() as s, s.begin():
            row = s.get(DeadlineRow, (class_id, exercise_id))
            if row is not None:
                s.delete(row)

    def extend(self, class_id: str, exercise_id: str, learner_id: str, due_at: datetime) -> None:
        """Give one learner a later due time (replacing an earlier extension)."""
        with self._sessions() as s, s.begin():
            if s.get(DeadlineRow, (class_id, exercise_id)) is None:
                raise InputError(N_("Set the exercise's deadline first; an extension moves it for one learner."))
            row = s.get(ExtensionRow, (class_id, exercise_id, learner_id))
            if row is None:
                s.add(ExtensionRow(class_id=class_id, exercise_id=exercise_id, learner_id=learner_id, due_at=due_at))
            else:
                row.due_at = due_at

    def of_class(self, class_id: str) -> dict[str, Deadline]:
        with self._sessions() as s:
            rows = s.scalars(select(DeadlineRow).where(DeadlineRow.class_id == class_id))
            return {r.exercise_id: Deadline(r.class_id, r.exercise_id, _aware(r.due_at), r.refuse_late) for r in rows}

    def extensions(self, class_id: str) -> dict[tuple[str, str], datetime]:
        """(exercise id, learner id) -> the extended due time."""
        with self._sessions() as s:
            rows = s.scalars(select(ExtensionRow).where(ExtensionRow.class_id == class_id))
            return {(r.exercise_id, r.learner_id): _aware(r.due_at) for r in rows}

    def due_for(self, class_id: str, exercise_id: str, learner_id: str) -> datetime | None:
        with self._sessions() as s:
            extension = s.get(ExtensionRow, (class_id, exercise_id, learner_id))
            if extension is not None:
                return _aware(extension.due_at)
            row = s.get(DeadlineRow, (class_id, exercise_id))
            return _aware(row.due_at) if row else None

    def of_learner(self, learner_id: str) -> list[tuple[str, str, datetime, bool]]:
        """(class id, exercise id, this learner's due time, refuse_late) for every class they are in."""
        with self._sessions() as s:
            rows = s.execute(select(DeadlineRow, ExtensionRow.due_at).join(
                MemberRow, MemberRow.class_id == DeadlineRow.class_id).outerjoin(
                ExtensionRow, (ExtensionRow.class_id == DeadlineRow.class_id)
                & (ExtensionRow.exercise_id == DeadlineRow.exercise_id) & (ExtensionRow.learner_id == learner_id))
                .where(MemberRow.learner_id == learner_id)).all()
        return [(d.class_id, d.exercise_id, _aware(extended or d.due_at), d.refuse_late) for d, extended in rows]

    def refusal(self, learner_id: str, exercise_id: str, now: datetime | None = None) -> datetime | None:
        """The passed due time that refuses this learner's submission to the exercise, or None (accepted). A class
        refuses only for itself: the submission is refused when every class of the learner refuses it (its
        `refuse_late` deadline for them has passed); a class of theirs with no such deadline still takes it, and
        shows it late where a deadline has passed."""
        now = now or _now()
        rows = self.of_learner(learner_id)
        refusing = {c: due for c, e, due, refuse in rows if e == exercise_id and refuse and now > due}
        if not refusing or set(self._classes_of(learner_id)) - set(refusing):
            return None
        return max(refusing.values())

    def _classes_of(self, learner_id: str) -> list[str]:
        with self._sessions() as s:
            return list(s.scalars(select(MemberRow.class_id).where(MemberRow.learner_id == learner_id)))
