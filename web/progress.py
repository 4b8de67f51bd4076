"""What an instructor sees of a class: learners × exercises, one learner's submissions, one exercise's failures.

Read-only queries over `submissions` joined with `class_members`, summed up here in plain Python (a class is
tens of learners), so SQLite and PostgreSQL give the same numbers.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from judge.reports.report import Report, Verdict, localized
from web.class_scope import in_class
from web.classes import Member
from web.deadlines import timing
from web.questions import Progress
from web.regrade import Regrade
from web.store import Submission, _aware
from web.tables import DONE, ORIGINS, SubmissionRow

ACCEPTED = Verdict.ACCEPTED.value
SAMPLES_PER_CHECK = 3
NO_CHECK = ""  # failing submissions whose report has no failing check (load errors, limits)


@dataclass
class Cell:
    """One learner on one exercise."""

    attempts: int = 0
    last_verdict: str | None = None  # a verdict, or 'queued'/'running' while the latest is grading
    first_solved_at: datetime | None = None
    last_at: datetime | None = None
    changed: int = 0  # submissions whose verdict a regrade changed
    last_before: str | None = None  # the latest submission's first verdict, when a regrade changed it
    due_at: datetime | None = None
    timing: str | None = None  # web.deadlines: on_time, late, missed, open (None: no deadline)
    last_origin: str | None = None  # browser, cli or notebook: where the latest submission was sent from
    origins: Counter = field(default_factory=Counter)  # submissions per origin
    first_at: datetime | None = None  # the first submission's time
    needs_questions: bool = False  # the class's rule: "solved" also needs every question answered (web/questions.py)
    questions: Progress | None = None  # the questions of the learner's best-answered accepted submission

    @property
    def solved(self) -> bool:
        """ACCEPTED (after regrades), and where the class's rule says so, every question about it answered."""
        return self.first_solved_at is not None and (
            not self.needs_questions or (self.questions is not None and self.questions.done))

    @property
    def time_to_solve(self) -> timedelta | None:
        """From the first submission to the first ACCEPTED one."""
        if self.first_solved_at is None or self.first_at is None:
            return None
        return self.first_solved_at - self.first_at


@dataclass
class Row:
    member: Member
    cells: dict[str, Cell]

    @property
    def solved(self) -> int:
        return sum(c.solved for c in self.cells.values())

    @property
    def attempts(self) -> int:
        return sum(c.attempts for c in self.cells.values())


SORTS = ("name", "solved", "attempts")


def sort_rows(rows: list[Row], key: str, descending: bool) -> list[Row]:
    """By `name`, `solved` (count), `attempts` (count) or an exercise id (solved first, then earlier, then fewer
    attempts); ties by name."""
    by_name = sorted(rows, key=lambda r: r.member.display_name.casefold())
    if key == "solved":
        return sorted(by_name, key=lambda r: r.solved, reverse=descending)
    if key == "attempts":
        return sorted(by_name, key=lambda r: r.attempts, reverse=descending)
    if key != "name":
        def rank(r: Row):
            cell = r.cells[key]
            return (0 if cell.solved else 1, cell.first_solved_at.timestamp() if cell.solved else 0, -cell.attempts)
        ranked = sorted(by_name, key=rank)
        return ranked[::-1] if descending else ranked
    return by_name[::-1] if descending else by_name


def _member_submissions(engine: Engine, class_id: str, exercise_id: str | None = None, *columns):
    query = in_class(select(*columns), class_id)
    if exercise_id is not None:
        query = query.where(SubmissionRow.exercise_id == exercise_id)
    with engine.connect() as conn:
        return conn.execute(query.order_by(SubmissionRow.created_at)).all()


DueFn = Callable[[str, str], "datetime | None"]  # (exercise id, learner id) -> that learner's due time


def class_table(engine: Engine, class_id: str, members: list[Member], exercise_ids: list[str],
                regraded: dict[str, Regrade] | None = None, due: DueFn | None = None,
                questions: dict[tuple[str, str], Progress] | None = None,
                needs_questions: set[str] | frozenset[str] = frozenset()) -> list[Row]:
    """A row per member, a cell per exercise of the course (submissions to exercises no longer served are left out).

    A submission's verdict is its newest regrade's (`regraded`: submission id -> regrade) when it has one; `due`
    gives each learner's deadline, from which each cell is on time, late, missed or open. `questions`: (learner,
    exercise) -> their questions answered; `needs_questions`: the exercises whose "solved" needs them all."""
    regraded = regraded or {}
    rows = {m.learner_id: Row(m, {e: Cell() for e in exercise_ids}) for m in members}
    columns = (SubmissionRow.id, SubmissionRow.learner_id, SubmissionRow.exercise_id, SubmissionRow.status,
               SubmissionRow.verdict, SubmissionRow.created_at, SubmissionRow.origin)
    for sid, learner_id, exercise_id, status, first, created_at, origin in _member_submissions(
            engine, class_id, None, *columns):
        row = rows.get(learner_id)
        if row is None or exercise_id not in row.cells:
            continue
        cell, created_at = row.cells[exercise_id], _aware(created_at)
        verdict = regraded[sid].verdict if sid in regraded else first
        changed = sid in regraded and verdict != first
        cell.attempts += 1
        cell.first_at = cell.first_at or created_at
        cell.changed += changed
        cell.last_verdict = verdict if status == DONE else status
        cell.last_before = first if changed else None
        cell.last_at = created_at
        cell.last_origin = origin
        cell.origins[origin] += 1
        if verdict == ACCEPTED and cell.first_solved_at is None:
            cell.first_solved_at = created_at
    for row in rows.values():
        for exercise_id, cell in row.cells.items():
            cell.due_at = due(exercise_id, row.member.learner_id) if due else None
            cell.timing = timing(cell.due_at, cell.first_solved_at)
            cell.needs_questions = exercise_id in needs_questions
            cell.questions = (questions or {}).get((row.member.learner_id, exercise_id))
    return list(rows.values())


def version_counts(engine: Engine, class_id: str, fingerprints: dict[str, str],
                   regraded: dict[str, Regrade]) -> dict[str, tuple[int, int]]:
    """exercise id -> (verdicts graded under an older version, verdicts): a regrade's version counts for its
    submission; a report from before versions were recorded counts as older."""
    counts: dict[str, list[int]] = {e: [0, 0] for e in fingerprints}
    columns = (SubmissionRow.id, SubmissionRow.exercise_id, SubmissionRow.fingerprint)
    query = in_class(select(*columns), class_id).where(SubmissionRow.status == DONE)
    with engine.connect() as conn:
        for sid, exercise_id, fingerprint in conn.execute(query):
            if exercise_id not in counts:
                continue
            graded_under = regraded[sid].fingerprint if sid in regraded else fingerprint
            counts[exercise_id][1] += 1
            counts[exercise_id][0] += graded_under != fingerprints[exercise_id]
    return {e: (old, total) for e, (old, total) in counts.items()}


CSV_HEAD = ["learner", "exercise id", "exercise number", "exercise title", "solved", "attempts", "last verdict",
            "first solved at", "last verdict before regrade", "verdicts changed by regrade", "due at", "timing",
            "last origin", "submissions by origin", "seconds to solve", "questions answered", "questions asked",
            "solved needs the questions"]


def csv_text(rows: list[Row], exercises: list[tuple[str, int, str]]) -> str:
    """The table as CSV in long form, which a spreadsheet filters and pivots: one line per learner and exercise
    (`exercises`: id, order number, title, in the course's order), learners in the table's order, times in UTC
    (ISO 8601).

    Beside the last verdict: that submission's verdict before a regrade changed it (empty when none did), how
    many of the learner's verdicts regrades changed, the learner's due time and on time / late, where the latest
    submission came from (browser, cli, notebook) and the submissions per origin ("browser 2; cli 1"); the seconds
    from the first submission to the first accepted one, the questions about the learner's accepted file answered
    and asked, and whether the class's "solved" needs them (then "solved" says so only once all are answered)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_HEAD)
    for row in rows:
        name = cell_text(row.member.display_name)
        for exercise_id, order, title in exercises:
            c = row.cells[exercise_id]
            writer.writerow([
                name, exercise_id, order, cell_text(title), "yes" if c.solved else "no", c.attempts,
                c.last_verdict or "", c.first_solved_at.isoformat(timespec="seconds") if c.first_solved_at else "",
                c.last_before or "", c.changed, c.due_at.isoformat(timespec="minutes") if c.due_at else "",
                c.timing or "", c.last_origin or "",
                "; ".join(f"{o} {c.origins[o]}" for o in (*ORIGINS, *sorted(set(c.origins) - set(ORIGINS)))
                          if c.origins[o]),
                int(c.time_to_solve.total_seconds()) if c.time_to_solve is not None else "",
                c.questions.solved if c.questions else "", c.questions.total if c.questions else "",
                "yes" if c.needs_questions else "no"])
    return out.getvalue()


def changes_csv(changes, names: dict[str, str]) -> str:
    """Every verdict a regrade changed: learner, exercise, submission, its time, before, after, reason, when."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["learner", "exercise", "submission", "submitted at", "before", "after", "reason", "regraded at"])
    for c in changes:
        finished = c.regrade.finished_at
        writer.writerow([cell_text(names.get(c.submission.learner_id, c.submission.learner_id)),
                         c.submission.exercise_id, c.submission.id,
                         c.submission.created_at.isoformat(timespec="seconds"), c.before or "", c.after or "",
                         cell_text(c.regrade.reason), finished.isoformat(timespec="seconds") if finished else ""])
    return out.getvalue()


def cell_text(text: str) -> str:
    # A name that a spreadsheet would run as a formula (=, +, -, @) is kept as text.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def learner_submissions(engine: Engine, class_id: str, learner_id: str, exercise_id: str | None = None,
                        limit: int | None = None, offset: int = 0) -> list[Submission]:
    """One member's submissions made in the class (web.class_scope), newest first, `limit` of them from `offset`
    (empty when the learner is not in the class)."""
    query = in_class(select(SubmissionRow), class_id).where(SubmissionRow.learner_id == learner_id)
    if exercise_id is not None:
        query = query.where(SubmissionRow.exercise_id == exercise_id)
    query = query.order_by(SubmissionRow.created_at.desc(), SubmissionRow.id).offset(offset).limit(limit)
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return [Submission.of(r) for r in rows]


def learner_counts(engine: Engine, class_id: str, learner_id: str) -> dict[str, int]:
    """exercise id -> how many submissions the member made to it in the class."""
    query = in_class(select(SubmissionRow.exercise_id, func.count()), class_id).where(
        SubmissionRow.learner_id == learner_id).group_by(SubmissionRow.exercise_id)
    with engine.connect() as conn:
        return {exercise_id: n for exercise_id, n in conn.execute(query)}


def first_solved_in_class(engine: Engine, class_id: str, learner_id: str,
                          regraded: dict[str, Regrade]) -> dict[str, datetime]:
    """exercise id -> when the member first solved it in the class (after regrades: submission id -> regrade)."""
    columns = (SubmissionRow.id, SubmissionRow.exercise_id, SubmissionRow.verdict, SubmissionRow.created_at)
    query = in_class(select(*columns), class_id).where(SubmissionRow.learner_id == learner_id)
    solved: dict[str, datetime] = {}
    with engine.connect() as conn:
        for sid, exercise_id, verdict, created_at in conn.execute(query.order_by(SubmissionRow.created_at)):
            if (regraded[sid].verdict if sid in regraded else verdict) == ACCEPTED:
                solved.setdefault(exercise_id, _aware(created_at))
    return solved


@dataclass
class Sample:
    learner_id: str
    display_name: str
    submission_id: str
    created_at: datetime
    message: str


@dataclass
class FailingCheck:
    name: str  # NO_CHECK for failures without a failing check
    title: str
    verdict: str
    first: int = 0  # submissions where this check was the first to fail: the root cause, what the ranking counts
    submissions: int = 0  # every submission that failed it, also after an earlier failing check
    learners: set[str] = field(default_factory=set)
    samples: list[Sample] = field(default_factory=list)


@dataclass
class ExerciseStats:
    verdicts: list[tuple[str, int]]  # most frequent first
    finished: int
    failing: list[FailingCheck]  # most often the first to fail first (root causes before their symptoms)
    learners_solved: int
    learners_tried: int


def exercise_stats(engine: Engine, class_id: str, exercise_id: str, members: list[Member],
                   lang: str = "en") -> ExerciseStats:
    """The class's verdicts on one exercise and the checks its failing submissions failed, with samples (newest);
    check titles and messages in `lang`."""
    names = {m.learner_id: m.display_name for m in members}
    columns = (SubmissionRow.id, SubmissionRow.learner_id, SubmissionRow.status, SubmissionRow.verdict,
               SubmissionRow.report_json, SubmissionRow.created_at)
    rows = _member_submissions(engine, class_id, exercise_id, *columns)
    verdicts: Counter[str] = Counter()
    failing: dict[str, FailingCheck] = {}
    solved, tried = set(), set()
    for sid, learner_id, status, verdict, report_json, created_at in reversed(rows):
        tried.add(learner_id)
        if status != DONE or verdict is None:
            continue
        verdicts[verdict] += 1
        if verdict == ACCEPTED:
            solved.add(learner_id)
            continue
        report = localized(Report.model_validate_json(report_json), lang) if report_json else None
        failed = [c for c in report.checks if not c.passed] if report else []
        keys = [(c.name, c.title or c.name, (c.verdict.value if c.verdict else verdict), c.message) for c in failed]
        keys = keys or [(NO_CHECK, "", verdict, report.summary if report else "")]
        for position, (name, title, check_verdict, message) in enumerate(keys):
            entry = failing.setdefault(name, FailingCheck(name, title, check_verdict))
            entry.submissions += 1
            entry.learners.add(learner_id)
            # Samples only where the check failed first, each message once: a later check that fails for the same
            # reason would repeat the same sentence under every symptom.
            if position == 0:
                entry.first += 1
                if len(entry.samples) < SAMPLES_PER_CHECK and all(x.message != message for x in entry.samples):
                    entry.samples.append(Sample(learner_id, names.get(learner_id, "?"), sid, _aware(created_at),
                                                message))
    return ExerciseStats(
        verdicts=sorted(verdicts.items(), key=lambda kv: (-kv[1], kv[0])), finished=sum(verdicts.values()),
        failing=sorted(failing.values(), key=lambda f: (-f.first, -f.submissions, -len(f.learners), f.name)),
        learners_solved=len(solved), learners_tried=len(tried))
