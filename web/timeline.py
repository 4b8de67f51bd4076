"""A learner's timeline on one exercise: every attempt, what the judge measured of it, what changed since the one
before, and the learner's one-line note.

Attempts are the learner's submissions from every front-end (the web page, `practice submit`, a notebook),
oldest first. Facts come from `submission_facts` (stored with the report, web/attempt_facts.py), or from the
stored report for a submission graded before facts were stored; nothing is graded again. The diff is difflib's,
kept as (kind, text) lines that templates escape like any other text. Who may read a timeline is the caller's
rule: the learner their own (`learner_id` is the requester's), an instructor what a member did in their class
(`class_id`, web/class_scope.py).
"""

from __future__ import annotations

import csv
import difflib
import io
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.engine import Engine

from judge.reports.report import Report
from web.attempt_facts import Facts, facts_of
from web.class_scope import in_class
from web.errors import InputError
from web.i18n import N_
from web.regrade import Regrades
from web.store import _aware
from web.tables import DONE, FactsRow, SubmissionRow

NOTE_CHARS = 140  # a note is one line: what the learner tried, or why
ATTEMPTS_SHOWN = 100  # the newest attempts of one exercise; the first shown still diffs against the one before it
DIFF_LINES = 200  # lines of one diff shown; the rest is counted
DIFF_LINE_CHARS = 300
CONTEXT_LINES = 2


@dataclass
class Attempt:
    """One submission on the timeline."""

    number: int  # 1 for the learner's first attempt at the exercise (in the scope read)
    id: str
    created_at: datetime
    origin: str
    status: str
    verdict: str | None
    facts: Facts | None  # None until graded
    note: str | None
    diff: list[tuple[str, str]] = field(default_factory=list)  # ('add'|'del'|'hunk'|'same', text)
    added: int = 0
    removed: int = 0
    diff_cut: int = 0  # diff lines left out
    first: bool = False  # no attempt before it: no diff
    regraded: str | None = None  # the verdict a regrade under a newer exercise version gave it, when it differs


def clean_note(text: str | None) -> str | None:
    """A note as stored: one line (whitespace and control characters collapse to single spaces), at most NOTE_CHARS
    characters (InputError otherwise); None when empty."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise InputError(N_("A note is text."))
    text = "".join(" " if unicodedata.category(c)[0] in "CZ" else c for c in text)
    text = " ".join(text.split())
    if len(text) > NOTE_CHARS:
        raise InputError(N_("A note is at most {chars} characters."), chars=NOTE_CHARS)
    return text or None


def diff_of(before: str, after: str) -> tuple[list[tuple[str, str]], int, int, int]:
    """The unified diff of two sources as (kind, text) lines; lines added, removed, and diff lines cut."""
    lines: list[tuple[str, str]] = []
    added = removed = 0
    raw = difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after", n=CONTEXT_LINES,
                               lineterm="")
    for text in raw:
        if text.startswith(("---", "+++")):
            continue
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(text[:1], "same")
        added += kind == "add"
        removed += kind == "del"
        lines.append((kind, text[:DIFF_LINE_CHARS]))
    return lines[:DIFF_LINES], added, removed, max(0, len(lines) - DIFF_LINES)


COLUMNS = (SubmissionRow.id, SubmissionRow.learner_id, SubmissionRow.exercise_id, SubmissionRow.source,
           SubmissionRow.status, SubmissionRow.verdict, SubmissionRow.report_json, SubmissionRow.created_at,
           SubmissionRow.origin, SubmissionRow.note, FactsRow.facts_json)


def _query(learner_id: str | None, exercise_id: str | None, class_id: str | None):
    query = select(*COLUMNS).outerjoin(FactsRow, FactsRow.submission_id == SubmissionRow.id)
    if class_id is not None:
        query = in_class(query, class_id)
    if learner_id is not None:
        query = query.where(SubmissionRow.learner_id == learner_id)
    if exercise_id is not None:
        query = query.where(SubmissionRow.exercise_id == exercise_id)
    return query


def _facts(row) -> Facts | None:
    if row.facts_json:
        return Facts.model_validate_json(row.facts_json)
    if row.status == DONE and row.report_json:  # graded before facts were stored
        return facts_of(Report.model_validate_json(row.report_json))
    return None


def _attempts(rows, regraded: dict) -> list[Attempt]:
    """Rows of one learner and exercise, oldest first, as attempts numbered from 1, each with its diff (`regraded`:
    submission id -> its newest regrade that counts, web.regrade)."""
    attempts, before = [], None
    for number, row in enumerate(rows, 1):
        after = regraded[row.id].verdict if row.id in regraded else None
        attempt = Attempt(number, row.id, _aware(row.created_at), row.origin, row.status, row.verdict, _facts(row),
                          row.note, first=before is None, regraded=after if after != row.verdict else None)
        if before is not None:
            attempt.diff, attempt.added, attempt.removed, attempt.diff_cut = diff_of(before, row.source)
        attempts.append(attempt)
        before = row.source
    return attempts


def timeline(engine: Engine, learner_id: str, exercise_id: str, class_id: str | None = None,
             shown: int = ATTEMPTS_SHOWN) -> list[Attempt]:
    """The learner's attempts at the exercise, oldest first: the newest `shown` of them (each numbered among all of
    them). With `class_id`, only what the learner did in that class (an instructor's view)."""
    query = _query(learner_id, exercise_id, class_id).order_by(SubmissionRow.created_at, SubmissionRow.id)
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return _attempts(rows, Regrades(engine).newest_done(learner_id=learner_id))[-shown:]


def class_timelines(engine: Engine, class_id: str) -> dict[tuple[str, str], list[Attempt]]:
    """(learner id, exercise id) -> that member's attempts in the class, oldest first (the CSV's lines)."""
    query = _query(None, None, class_id).order_by(SubmissionRow.created_at, SubmissionRow.id)
    grouped: dict[tuple[str, str], list] = {}
    with engine.connect() as conn:
        for row in conn.execute(query):
            grouped.setdefault((row.learner_id, row.exercise_id), []).append(row)
    regraded = Regrades(engine).newest_done(class_id=class_id)
    return {key: _attempts(rows, regraded) for key, rows in grouped.items()}


def breaks_text(facts: Facts | None) -> str:
    """'GB0170@6; GB0124@7': each break's registry id and line."""
    if facts is None:
        return ""
    return "; ".join(f"{b.gb_id or '?'}@{b.line if b.line is not None else '?'}" for b in facts.breaks)


def guards_text(facts: Facts | None) -> str:
    """'L['x'].size()[0] == 4 @5; ...': each failing guard and the line that added it."""
    if facts is None:
        return ""
    return "; ".join(g.guard + (f" @{g.line}" if g.line is not None else "") for g in facts.guards)


CSV_HEAD = ["learner", "exercise id", "attempt", "submitted at", "origin", "verdict", "verdict after regrade",
            "checks passed", "checks",
            "graph breaks (id@line)", "recompiles", "failing guards (guard @line)", "graphs per call",
            "graphs compiled", "kernels", "bytes",
            "grading seconds", "gpu us", "lines added", "lines removed", "note"]


def timeline_csv(timelines: dict[tuple[str, str], list[Attempt]], names: dict[str, str],
                 exercise_order: list[str], cell_text) -> str:
    """Every attempt of the class, one line each (long form, like progress.csv): learners by name, exercises in
    course order, attempts oldest first; times in UTC (ISO 8601). `cell_text` keeps a spreadsheet from running a
    name, a note or a guard as a formula."""
    order = {e: i for i, e in enumerate(exercise_order)}
    keys = sorted((k for k in timelines if k[0] in names),
                  key=lambda k: (names[k[0]].casefold(), k[0], order.get(k[1], len(order)), k[1]))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_HEAD)
    for learner_id, exercise_id in keys:
        for a in timelines[(learner_id, exercise_id)]:
            f = a.facts
            writer.writerow([
                cell_text(names[learner_id]), exercise_id, a.number, a.created_at.isoformat(timespec="seconds"),
                a.origin, a.verdict or a.status, a.regraded or "", f.checks_passed if f else "", f.checks if f else "",
                breaks_text(f), f.recompiles if f else "", cell_text(guards_text(f)),
                _blank(f.graphs if f else None), _blank(f.compiles if f else None), _blank(f.kernels if f else None),
                _blank(f.bytes if f else None),
                f.duration_s if f else "", _blank(f.gpu_us if f else None), a.added, a.removed,
                cell_text(a.note or "")])
    return out.getvalue()


def _blank(value) -> str | int | float:
    return "" if value is None else value
