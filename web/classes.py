"""Instructors, classes and their members, stored with SQLAlchemy beside the submissions.

Errors a person can fix (a taken display name, a wrong password) are `InputError`s whose message says what
to do; pages translate them. Passwords are Argon2 hashes (`web.passwords`, rules in `web.password_policy`);
sign-in links are random tokens of which only the SHA-256 is kept, so reissuing one makes the old link stop
working; a link works once, within `link_days` of being made. Each account has a session epoch
(`web.sessions`): a new link, a new password or signing out raises it and so ends the sessions made before.
Password sign-ins go through `web.throttle`'s backoff.

One learner may be in several classes. What an instructor of one of them may do to a member is bounded by
`foreign_classes` (docs/security.md, "Accounts, sessions and classes"): see only what the learner did while
in the instructor's class, and issue a sign-in link or token only for a learner in no class they do not teach
(any of the learner's instructors may end the link and revoke the tokens).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from web.errors import InputError
from web.i18n import N_
from web.names import MAX_DISPLAY_NAME, display_name_of, look_alike, name_key as _key
from web.password_policy import check_new_password
from web.passwords import hash_password, new_token, token_hash, verify_password
from web.sessions import LearnerSession
from web.store import _aware, ensure_learner
from web.tables import ClassInstructorRow, ClassRow, InstructorRow, LearnerRow, MemberRow, now as _now
from web.throttle import SignInThrottle, account_key, address_key

__all__ = ["MAX_DISPLAY_NAME", "ClassStore", "display_name_of"]
USERNAME = re.compile(r"^[\w.@-]{1,64}$")
MAX_CLASS_NAME = 200


@dataclass(frozen=True)
class Instructor:
    id: str
    username: str
    session_epoch: int = 0


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


class ClassStore:
    """Accounts and classes; every method opens and closes its own session (thread-safe)."""

    def __init__(self, engine: Engine, throttle: SignInThrottle | None = None, link_days: float = 7):
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self.throttle = throttle or SignInThrottle(engine)
        self.link_lifetime = timedelta(days=link_days)  # how long a personal sign-in link works (once)

    # ---- sessions ---------------------------------------------------------------------------------
    def sessions_current(self, learner: LearnerSession | None,
                         instructor: tuple[str, int] | None) -> tuple[bool, bool]:
        """Whether each cookie's epoch is its account's (a learner not stored yet is at epoch 0)."""
        with self._sessions() as s:
            learner_ok = learner is not None and learner.epoch == (
                s.scalar(select(LearnerRow.session_epoch).where(LearnerRow.id == learner.learner_id)) or 0)
            instructor_ok = instructor is not None and s.scalar(select(InstructorRow.session_epoch).where(
                InstructorRow.id == instructor[0])) == instructor[1]
        return learner_ok, instructor_ok

    def learner_epoch(self, learner_id: str) -> int:
        with self._sessions() as s:
            return s.scalar(select(LearnerRow.session_epoch).where(LearnerRow.id == learner_id)) or 0

    def end_learner_sessions(self, learner_id: str) -> int:
        """End every session of the learner made so far; the new epoch (for the cookie of the one that stays)."""
        with self._sessions() as s, s.begin():
            ensure_learner(s.connection(), learner_id)
            s.execute(update(LearnerRow).where(LearnerRow.id == learner_id)
                      .values(session_epoch=LearnerRow.session_epoch + 1))
        return self.learner_epoch(learner_id)

    def end_instructor_sessions(self, instructor_id: str) -> None:
        with self._sessions() as s, s.begin():
            s.execute(update(InstructorRow).where(InstructorRow.id == instructor_id)
                      .values(session_epoch=InstructorRow.session_epoch + 1))

    # ---- instructors ------------------------------------------------------------------------------
    def add_instructor(self, username: str, password: str) -> Instructor:
        username = username.strip().lower()
        if not USERNAME.match(username):
            raise InputError(N_("The user name may hold letters, digits, '.', '@', '-' and '_' (at most 64)."))
        check_new_password(password, (username,))
        row = InstructorRow(id=uuid.uuid4().hex, username=username, password_hash=hash_password(password),
                            created_at=_now(), session_epoch=0)
        try:
            with self._sessions() as s, s.begin():
                s.add(row)
        except IntegrityError:
            raise InputError(N_("An instructor named {name} exists already: choose another user name."),
                             name=username) from None
        return Instructor(row.id, row.username)

    def set_instructor_password(self, username: str, password: str) -> None:
        """A new password; every session of the instructor made before ends."""
        check_new_password(password, (username.strip().lower(),))
        with self._sessions() as s, s.begin():
            done: CursorResult = s.execute(update(InstructorRow).where(
                InstructorRow.username == username.strip().lower()).values(
                password_hash=hash_password(password), session_epoch=InstructorRow.session_epoch + 1))
        if done.rowcount != 1:
            raise InputError(N_("No instructor is named {name}: check the spelling, or create the account with "
                                "`practice admin add-instructor`."), name=username.strip())

    def instructor(self, instructor_id: str | None) -> Instructor | None:
        if not instructor_id:
            return None
        with self._sessions() as s:
            row = s.get(InstructorRow, instructor_id)
            return Instructor(row.id, row.username, row.session_epoch) if row else None

    def sign_in_instructor(self, username: str, password: str, address: str | None = None) -> Instructor:
        """The instructor of this name and password; `InputError` (`SignInThrottled` while backing off)."""
        username = username.strip().lower()
        keys = account_key("instructor", "", username[:64]), address_key(address)
        self.throttle.check(*keys)
        with self._sessions() as s:
            row = s.scalar(select(InstructorRow).where(InstructorRow.username == username))
        if not verify_password(row.password_hash if row else None, password):
            self.throttle.failed(*keys)
            raise InputError(N_("Wrong user name or password: check both and try again (user names are "
                                "created with `practice admin add-instructor`)."))
        self.throttle.succeeded(*keys)
        return Instructor(row.id, row.username, row.session_epoch)

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
            found = []
            for row in rows:  # a Row is a tuple; indexing keeps its column types for mypy (unpacking loses them)
                r, n = row[0], row[1]
                found.append(Class(r.id, r.name, r.join_code, _aware(r.created_at), n or 0))
            return found

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
            check_new_password(password, (name,))
        try:
            with self._sessions() as s, s.begin():
                ensure_learner(s.connection(), learner_id)
                if s.get(MemberRow, (class_id, learner_id)) is not None:
                    raise InputError(N_("You are in this class already."))
                similar = look_alike(name, list(s.scalars(select(MemberRow.display_name).where(
                    MemberRow.class_id == class_id))))
                if similar is not None:
                    raise InputError(N_("{name} looks like {other}, the name of someone in this class: choose a "
                                        "name that reads differently (add your family name or a number)."),
                                     name=name, other=similar)
                if password and s.get(LearnerRow, learner_id).password_hash is not None:
                    raise InputError(N_("You have a password already (it signs you in to all your classes): leave "
                                        "the password empty, or change it on your page."))
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
    def sign_in_learner(self, class_id: str, display_name: str, password: str, address: str | None = None) -> Member:
        """The member of this name (in any typed form of it) and password; `InputError` (`SignInThrottled`)."""
        key = _key(display_name)
        keys = account_key("learner", class_id, key[:MAX_DISPLAY_NAME * 3]), address_key(address)
        self.throttle.check(*keys)
        with self._sessions() as s:
            row = s.execute(select(MemberRow, LearnerRow.password_hash).join(
                LearnerRow, LearnerRow.id == MemberRow.learner_id).where(
                MemberRow.class_id == class_id, MemberRow.name_key == key)).first()
        if not verify_password(row[1] if row else None, password):
            self.throttle.failed(*keys)
            raise InputError(N_("Wrong display name or password for this class. No password yet? Ask your "
                                "instructor for your personal sign-in link."))
        self.throttle.succeeded(*keys)
        return self._member(*row)

    def set_learner_password(self, learner_id: str, password: str, current: str = "", may_reset: bool = False,
                             address: str | None = None) -> int:
        """A new password, checked against the current one where there is one (not within a sign-in link's
        reset window, `may_reset`); every session made before ends. The new epoch, for this browser's cookie."""
        self.check_current_password(learner_id, current, may_reset, address)
        with self._sessions() as s:
            names = tuple(s.scalars(select(MemberRow.display_name).where(MemberRow.learner_id == learner_id)))
        check_new_password(password, names)
        with self._sessions() as s, s.begin():
            ensure_learner(s.connection(), learner_id)
            s.execute(update(LearnerRow).where(LearnerRow.id == learner_id)
                      .values(password_hash=hash_password(password)))
        return self.end_learner_sessions(learner_id)

    def check_current_password(self, learner_id: str, current: str, may_reset: bool = False,
                               address: str | None = None) -> None:
        """`InputError` unless `current` is the learner's password, where they have one and are not within a sign-in
        link's reset window (`may_reset`); failures count in the sign-in backoff (`SignInThrottled`)."""
        with self._sessions() as s:
            stored = s.scalar(select(LearnerRow.password_hash).where(LearnerRow.id == learner_id))
        if stored is None or may_reset:
            return
        keys = account_key("learner-current", "", learner_id), address_key(address)
        self.throttle.check(*keys)
        if not verify_password(stored, current):
            self.throttle.failed(*keys)
            raise InputError(N_("The current password is wrong: type the password you sign in with now (lost "
                                "it? sign in with a personal sign-in link, then set a new one)."))
        self.throttle.succeeded(*keys)

    def has_password(self, learner_id: str) -> bool:
        with self._sessions() as s:
            return s.scalar(select(LearnerRow.password_hash).where(LearnerRow.id == learner_id)) is not None

    def issue_signin_token(self, learner_id: str) -> str:
        """A new personal sign-in token for the learner; the previous one and every session made before end."""
        token = new_token()
        with self._sessions() as s, s.begin():
            ensure_learner(s.connection(), learner_id)
            s.execute(update(LearnerRow).where(LearnerRow.id == learner_id)
                      .values(signin_token_hash=token_hash(token), signin_token_issued_at=_now(),
                              session_epoch=LearnerRow.session_epoch + 1))
        return token

    def foreign_classes(self, learner_id: str, instructor_id: str) -> list[Class]:
        """The learner's classes that the instructor does not teach (where the instructor may not act)."""
        taught = select(ClassInstructorRow.class_id).where(ClassInstructorRow.instructor_id == instructor_id)
        with self._sessions() as s:
            rows = s.scalars(select(ClassRow).join(MemberRow, MemberRow.class_id == ClassRow.id).where(
                MemberRow.learner_id == learner_id, ClassRow.id.not_in(taught)).order_by(ClassRow.created_at))
            return [Class(c.id, c.name, c.join_code, _aware(c.created_at)) for c in rows]

    def learner_by_token(self, token: str) -> str | None:
        """The learner whose sign-in link this is, while it works (not used yet, not expired); nothing is used up."""
        with self._sessions() as s:
            return s.scalar(select(LearnerRow.id).where(*self._link_works(token)))

    def use_signin_token(self, token: str) -> str | None:
        """The learner whose working sign-in link this is, and the link is used up (a link works once; of two
        requests using it at once, one gets it)."""
        with self._sessions() as s, s.begin():
            learner_id = s.scalar(select(LearnerRow.id).where(*self._link_works(token)))
            if learner_id is None:
                return None
            done: CursorResult = s.execute(update(LearnerRow).where(LearnerRow.id == learner_id, *self._link_works(
                token)).values(signin_token_hash=None, signin_token_issued_at=None))
            return learner_id if done.rowcount == 1 else None

    def end_signin_link(self, learner_id: str) -> None:
        """The learner's sign-in link stops working (an instructor's revocation)."""
        with self._sessions() as s, s.begin():
            s.execute(update(LearnerRow).where(LearnerRow.id == learner_id)
                      .values(signin_token_hash=None, signin_token_issued_at=None))

    def _link_works(self, token: str) -> tuple:
        return (LearnerRow.signin_token_hash == token_hash(token),
                LearnerRow.signin_token_issued_at > _now() - self.link_lifetime)
