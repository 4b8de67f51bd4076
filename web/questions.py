"""Questions about a learner's accepted submission, stored with it (judge/parent/questions.py makes them), their
answers,
and each class's rule on whether "solved" needs them.

A question's measured answer stays here until the learner finds it. Each distinct answer is stored once (the
same answer sent twice counts once); a wrong one adds to `wrong`, the right one solves the question, and nothing
changes a solved question. Only the submission's learner may answer (`answer` returns None for anyone else).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from judge.parent.questions import Question, normalized
from web.class_scope import in_class
from web.errors import InputError
from web.i18n import N_
from web.store import _aware
from web.tables import AnswerRow, MemberRow, QuestionRow, QuestionRuleRow, SubmissionRow, now


@dataclass(frozen=True)
class Asked:
    """A stored question and where the learner stands on it."""

    id: str
    submission_id: str
    number: int
    question: Question
    wrong: int
    solved_at: datetime | None

    @classmethod
    def of(cls, row: QuestionRow) -> Asked:
        return cls(row.id, row.submission_id, row.number, Question.model_validate_json(row.question_json),
                   row.wrong or 0, _aware(row.solved_at))

    def public(self, lang: str) -> dict:
        """What the learner's page gets: the measured answer and its explanation only once solved."""
        q = self.question
        out = {"id": self.id, "number": self.number, "kind": q.kind, "prompt": q.prompt.get(lang, q.prompt["en"]),
               "choices": [{"value": c.value, "label": c.label.get(lang, c.label["en"])} for c in q.choices],
               "wrong": self.wrong, "solved": self.solved_at is not None}
        if self.solved_at is not None:
            out["answer"], out["explanation"] = q.answer, q.explanation.get(lang, q.explanation.get("en", ""))
        return out


@dataclass(frozen=True)
class Progress:
    """A learner's questions on one exercise: those of their best-answered accepted submission."""

    solved: int
    total: int

    @property
    def done(self) -> bool:
        return self.total > 0 and self.solved == self.total


class QuestionStore:
    def __init__(self, engine: Engine):
        self.engine = engine

    def asked(self, submission_id: str) -> list[Asked]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(QuestionRow).where(QuestionRow.submission_id == submission_id)
                                .order_by(QuestionRow.number)).all()
        return [Asked.of(r) for r in rows]

    def save(self, submission_id: str, questions: list[Question]) -> list[Asked]:
        """Store the submission's questions unless it has some already (the first set stays): the stored ones."""
        try:
            with self.engine.begin() as conn:
                if conn.scalar(select(QuestionRow.id).where(QuestionRow.submission_id == submission_id).limit(1)):
                    return self.asked(submission_id)
                for number, question in enumerate(questions, 1):
                    conn.execute(insert(QuestionRow).values(
                        id=uuid.uuid4().hex, submission_id=submission_id, number=number,
                        question_json=question.model_dump_json(), wrong=0, created_at=now()))
        except IntegrityError:  # made at the same time by another request: theirs stays
            pass
        return self.asked(submission_id)

    def answer(self, learner_id: str, question_id: str, given: str) -> tuple[Asked, bool] | None:
        """Check the learner's answer: (the question as it stands now, whether this answer is right); None when the
        question is not one of this learner's. InputError: not an answer of the question's form."""
        with self.engine.begin() as conn:
            row = conn.execute(select(QuestionRow).join(SubmissionRow, SubmissionRow.id == QuestionRow.submission_id)
                               .where(QuestionRow.id == question_id, SubmissionRow.learner_id == learner_id)).first()
            if row is None:
                return None
            asked = Asked.of(row)
            answer = normalized(given, asked.question) if isinstance(given, str) else None
            if answer is None:
                raise InputError(N_("Answer with one of the choices, or a whole number."))
            right = answer == asked.question.answer
            if asked.solved_at is not None:
                return asked, right
            if _insert_once(conn, question_id, answer, right):
                if right:
                    conn.execute(update(QuestionRow).where(QuestionRow.id == question_id,
                                                           QuestionRow.solved_at.is_(None)).values(solved_at=now()))
                else:
                    conn.execute(update(QuestionRow).where(QuestionRow.id == question_id)
                                 .values(wrong=QuestionRow.wrong + 1))
            row = conn.execute(select(QuestionRow).where(QuestionRow.id == question_id)).first()
        return Asked.of(row), right

    def progress(self, learner_ids: list[str] | None = None, class_id: str | None = None
                 ) -> dict[tuple[str, str], Progress]:
        """(learner id, exercise id) -> the questions of the learner's best-answered submission to it (with
        `class_id`: of the submissions the class sees, web/class_scope.py)."""
        query = select(SubmissionRow.learner_id, SubmissionRow.exercise_id, QuestionRow.submission_id,
                       QuestionRow.solved_at).select_from(QuestionRow).join(
            SubmissionRow, SubmissionRow.id == QuestionRow.submission_id)
        if class_id is not None:
            query = in_class(query, class_id)
        if learner_ids is not None:
            query = query.where(SubmissionRow.learner_id.in_(learner_ids))
        per_submission: dict[tuple[str, str, str], list[int]] = {}
        with self.engine.connect() as conn:
            for learner_id, exercise_id, submission_id, solved_at in conn.execute(query):
                counts = per_submission.setdefault((learner_id, exercise_id, submission_id), [0, 0])
                counts[0] += solved_at is not None
                counts[1] += 1
        best: dict[tuple[str, str], Progress] = {}
        for (learner_id, exercise_id, _), (solved, total) in per_submission.items():
            known = best.get((learner_id, exercise_id))
            if known is None or (solved == total, solved) > (known.done, known.solved):
                best[(learner_id, exercise_id)] = Progress(solved, total)
        return best

    def required_for(self, learner_id: str, exercise_id: str) -> bool:
        """Whether a class of the learner's makes "solved" need the questions on this exercise."""
        with self.engine.connect() as conn:
            return conn.scalar(select(QuestionRuleRow.class_id).join(
                MemberRow, MemberRow.class_id == QuestionRuleRow.class_id).where(
                MemberRow.learner_id == learner_id, QuestionRuleRow.exercise_id == exercise_id,
                QuestionRuleRow.require_questions.is_(True)).limit(1)) is not None

    def answered_all(self, learner_id: str, exercise_id: str) -> bool:
        """Whether the learner answered every question about one of their accepted submissions to the exercise."""
        found = self.progress([learner_id]).get((learner_id, exercise_id))
        return found is not None and found.done

    def rules(self, class_id: str) -> set[str]:
        """The exercises whose "solved" needs the questions in this class."""
        with self.engine.connect() as conn:
            return set(conn.scalars(select(QuestionRuleRow.exercise_id).where(
                QuestionRuleRow.class_id == class_id, QuestionRuleRow.require_questions.is_(True))))

    def set_rule(self, class_id: str, exercise_id: str, require: bool) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(QuestionRuleRow).where(QuestionRuleRow.class_id == class_id,
                                                                  QuestionRuleRow.exercise_id == exercise_id))
            if require:
                conn.execute(insert(QuestionRuleRow).values(class_id=class_id, exercise_id=exercise_id,
                                                                       require_questions=True))


def _insert_once(conn, question_id: str, answer: str, right: bool) -> bool:
    """Store the answer unless it was given before; True when this call stored it."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as insert_or_skip
    else:
        from sqlalchemy.dialects.sqlite import insert as insert_or_skip
    stored = conn.execute(insert_or_skip(AnswerRow).values(
        question_id=question_id, answer=answer, correct=right, created_at=now()).on_conflict_do_nothing()
        .returning(AnswerRow.question_id))
    return stored.first() is not None
