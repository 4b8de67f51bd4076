"""Instructors, classes and their members, stored with SQLAlchemy beside the submissions.

Errors a person can fix (a taken display name, a wrong password) are `InputError`s whose message says what
to do; pages translate them. Passwords are Argon2 hashes (`web.passwords`); sign-in links are random tokens
of which only the SHA-256 is kept, so reissuing one makes the old link stop working.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from web.errors import InputError
from web.i18n import N_
from web.passwords import check_new_password, hash_password, new_token, token_hash, verify_password
from web.store import _aware, ensure_learner
from web.tables import ClassInstructorRow, ClassRow, InstructorRow, LearnerRow, MemberRow, now as _now

USERNAME = re.compile(r"^[\w.@-]{1,64}$")
MAX_DISPLAY_NAME = 40
MAX_CLASS_NAME = 200


@dataclass(frozen=True)
class Instructor:
    id: str
    username: str


@dataclass(frozen=True)
class Class:
    id: str
    name: str
    join_code: str
    created_at: datetime
    members: int = 0


@dataclass(frozen=True)
class Member:
    class_id: str
    learner_id: str
    display_name: str
    joined_at: datetime
    has_password: bool = False


def display_name_of(text: str) -> str:
    """A display name as stored: NFC, inner runs of spaces made one; `InputError` when empty, long or odd."""
    name = " ".join(unicodedata.normalize("NFC", text).split())
    if not name:
        raise InputError(N_("Enter a display name: the name your instructor will see."))
    if len(name) > MAX_DISPLAY_NAME:
        raise InputError(N_("The display name is too long: use at most {n} characters."), n=MAX_DISPLAY_NAME)
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise InputError(N_("The display name contains control characters: use letters, digits and spaces."))
    return name


def _key(display_name: str) -> str:
    return display_name.casefold()


class ClassStore:
    """Accounts and classes; every method opens and closes its own session (thread-safe)."""

    def __init__(self, engine: Engine):
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    # ---- instructors ------------------------------------------------------------------------------
    def add_instructor(self, username: str, password: str) -> Instructor:
        username = username.strip().lower()
        if not USERNAME.match(username):
            raise InputError(N_("The user name may hold letters, digits, '.', '@', '-' and '_' (at most 64)."))
        check_new_password(password)
        row = InstructorRow(id=uuid.uuid4().hex, username=username, password_hash=hash_password(password),
                            created_at=_now())
        try:
            with self._sessions() as s, s.begin():
                s.add(row)
        except IntegrityError:
            raise InputError(N_("An instructor named {name} exists already: choose another user name."),
                             name=username) from None
        return Instructor(row.id, row.username)

    def set_instructor_password(self, username: str, password: str) -> None:
        check_new_password(password)
        with self._sessions() as s, s.begin():
            done: CursorResult = s.execute(update(InstructorRow).where(
                InstructorRow.username == username.strip().lower()).values(password_hash=hash_password(password)))
        if done.rowcount != 1:
            raise InputError(N_("No instructor is named {name}: check the spelling, or create the account with "
                                "`practice admin add-instructor`."), name=username.strip())

    def instructor(self, instructor_id: str | None) -> Instructor | None:
        if not instructor_id:
            return None
        with self._sessions() as s:
            row = s.get(InstructorRow, instructor_id)
            return Instructor(row.id, row.username) if row else None

    def sign_in_instructor(self, username: str, password: str) -> Instructor:
        with self._sessions() as s:
            row = s.scalar(select(InstructorRow).where(InstructorRow.username == username.strip().lower()))
        if not verify_password(row.password_hash if row else None, password):
            raise InputError(N_("Wrong user name or password: check both and try again (user names are "
                                "created with `practice admin add-instructor`)."))
        return Instructor(row.id, row.username)

    # ---- classes ----------------------------------------------------------------------------------
    def create_class(self, instructor_id: str, name: str) -> Class:
        name = " ".join(name.split())
        if not name:
            raise InputError(N_("Enter a name for the class."))
        if len(name) > MAX_CLASS_NAME:
            raise InputError(N_("The class name is too long: use at most {n} characters."), n=MAX_CLASS_NAME)
        row = ClassRow(id=uuid.uuid4().hex, name=name, join_code=new_token(12), created_at=_now())
        with self._sessions() as s, s.begin():
            s.add(row)
            s.flush()
            s.add(ClassInstructorRow(class_id=row.id, instructor_id=instructor_id))
        return Class(row.id, row.name, row.join_code, _aware(row.created_at))

    def classes_of(self, instructor_id: str) -> list[Class]:
        members = (select(MemberRow.class_id, func.count().label("n")).group_by(MemberRow.class_id).subquery())
        with self._sessions() as s:
            rows = s.execute(select(ClassRow, members.c.n).join(
                ClassInstructorRow, ClassInstructorRow.class_id == ClassRow.id).outerjoin(
                members, members.c.class_id == ClassRow.id).where(
                ClassInstructorRow.instructor_id == instructor_id).order_by(ClassRow.created_at.desc()))
            return [Class(r.id, r.name, r.join_code, _aware(r.created_at), n or 0) for r, n in rows.tuples()]

    def get_class(self, class_id: str) -> Class | None:
        with self._sessions() as s:
            row = s.get(ClassRow, class_id)
            return Class(row.id, row.name, row.join_code, _aware(row.created_at)) if row else None

    def class_by_code(self, join_code: str) -> Class | None:
        with self._sessions() as s:
            row = s.scalar(select(ClassRow).where(ClassRow.join_code == join_code))
            return Class(row.id, row.name, row.join_code, _aware(row.created_at)) if row else None

    def teaches(self, instructor_id: str | None, class_id: str) -> bool:
        if not instructor_id:
            return False
        with self._sessions() as s:
            return s.get(ClassInstructorRow, (class_id, instructor_id)) is not None

    def instructors_of(self, class_id: str) -> list[Instructor]:
        with self._sessions() as s:
            rows = s.scalars(select(InstructorRow).join(ClassInstructorRow).where(
                ClassInstructorRow.class_id == class_id).order_by(InstructorRow.username))
            return [Instructor(r.id, r.username) for r in rows]

    def add_class_instructor(self, class_id: str, username: str) -> Instructor:
        with self._sessions() as s, s.begin():
            row = s.scalar(select(InstructorRow).where(InstructorRow.username == username.strip().lower()))
            if row is None:
                raise InputError(N_("No instructor is named {name}: check the spelling, or create the account with "
                                    "`practice admin add-instructor`."), name=username.strip())
            if s.get(ClassInstructorRow, (class_id, row.id)) is None:
                s.add(ClassInstructorRow(class_id=class_id, instructor_id=row.id))
            return Instructor(row.id, row.username)

    # ---- members ----------------------------------------------------------------------------------
    def join(self, class_id: str, learner_id: str, display_name: str, password: str = "") -> Member:
        """Add the learner (the cookie's id, with its submissions so far) under a display name unique in the class."""
        name = display_name_of(display_name)
        if password:
            check_new_password(password)
        try:
            with self._sessions() as s, s.begin():
                ensure_learner(s.connection(), learner_id)
                if s.get(MemberRow, (class_id, learner_id)) is not None:
                    raise InputError(N_("You are in this class already."))
                s.add(MemberRow(class_id=class_id, learner_id=learner_id, display_name=name, name_key=_key(name),
                                joined_at=_now()))
                if password:
                    s.execute(update(LearnerRow).where(LearnerRow.id == learner_id)
                              .values(password_hash=hash_password(password)))
        except IntegrityError:
            raise InputError(N_("Someone in this class is already called {name}: add your family name or a "
                                "number, or sign in below if that is you."), name=name) from None
        return self.member(class_id, learner_id)

    def member(self, class_id: str, learner_id: str) -> Member | None:
        with self._sessions() as s:
            row = s.execute(select(MemberRow, LearnerRow.password_hash).join(
                LearnerRow, LearnerRow.id == MemberRow.learner_id).where(
                MemberRow.class_id == class_id, MemberRow.learner_id == learner_id)).first()
            return self._member(*row) if row else None

    def members(self, class_id: str) -> list[Member]:
        with self._sessions() as s:
            rows = s.execute(select(MemberRow, LearnerRow.password_hash).join(
                LearnerRow, LearnerRow.id == MemberRow.learner_id).where(MemberRow.class_id == class_id)
                .order_by(MemberRow.name_key))
            return [self._member(m, h) for m, h in rows]

    def memberships(self, learner_id: str) -> list[tuple[Class, Member]]:
        with self._sessions() as s:
            rows = s.execute(select(ClassRow, MemberRow).join(MemberRow, MemberRow.class_id == ClassRow.id)
                             .where(MemberRow.learner_id == learner_id).order_by(MemberRow.joined_at))
            return [(Class(c.id, c.name, c.join_code, _aware(c.created_at)), self._member(m, None))
                    for c, m in rows]

    @staticmethod
    def _member(row: MemberRow, password_hash: str | None) -> Member:
        return Member(row.class_id, row.learner_id, row.display_name, _aware(row.joined_at), password_hash is not None)

    # ---- learners signing in --------------------------------------------------------------------------
    def sign_in_learner(self, class_id: str, display_name: str, password: str) -> Member:
        with self._sessions() as s:
            row = s.execute(select(MemberRow, LearnerRow.password_hash).join(
                LearnerRow, LearnerRow.id == MemberRow.learner_id).where(
                MemberRow.class_id == class_id, MemberRow.name_key == _key(" ".join(display_name.split())))).first()
        if not verify_password(row[1] if row else None, password):
            raise InputError(N_("Wrong display name or password for this class. No password yet? Ask your "
                                "instructor for your personal sign-in link."))
        return self._member(*row)

    def set_learner_password(self, learner_id: str, password: str) -> None:
        check_new_password(password)
        with self._sessions() as s, s.begin():
            ensure_learner(s.connection(), learner_id)
            s.execute(update(LearnerRow).where(LearnerRow.id == learner_id)
                      .values(password_hash=hash_password(password)))

    def issue_signin_token(self, learner_id: str) -> str:
        """A new personal sign-in token for the learner; the previous one stops working."""
        token = new_token()
        with self._sessions() as s, s.begin():
            ensure_learner(s.connection(), learner_id)
            s.execute(update(LearnerRow).where(LearnerRow.id == learner_id)
                      .values(signin_token_hash=token_hash(token)))
        return token

    def learner_by_token(self, token: str) -> str | None:
        with self._sessions() as s:
            return s.scalar(select(LearnerRow.id).where(LearnerRow.signin_token_hash == token_hash(token)))
