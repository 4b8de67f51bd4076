"""The database tables, declared once; `web/migrations/` creates and changes them (never `create_all`).

A test (`tests/web/test_db.py`) checks that the migrations at head produce exactly these tables.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import BigInteger, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

QUEUED, RUNNING, DONE = "queued", "running", "done"
BROWSER, CLI, NOTEBOOK = "browser", "cli", "notebook"
ORIGINS = (BROWSER, CLI, NOTEBOOK)
# SQLite numbers only INTEGER PRIMARY KEY columns by itself.
EventId = BigInteger().with_variant(Integer(), "sqlite")


def now() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    pass


class LearnerRow(Base):
    """A learner: a cookie's random id, made on the first submission or on joining a class.

    Anonymous until they join a class; a password or a personal sign-in link (stored as a SHA-256 of a random
    token) brings the same learner back in another browser.
    """

    __tablename__ = "learners"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)
    signin_token_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # When the sign-in link was made: it works once, for `signin_link_days` after this (web/classes.py).
    signin_token_issued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    # Carried in the learner's signed cookie; raising it ends every session made before (web/sessions.py).
    session_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    __table_args__ = (Index("ix_learners_signin_token_hash", "signin_token_hash", unique=True),)


class SubmissionRow(Base):
    """One submission; the truth about it (status, verdict) whichever process grades it."""

    __tablename__ = "submissions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(64), ForeignKey("learners.id", name="fk_submissions_learner"),
                                            index=True)
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
    # The exercise version its report was graded under (judge.parent.fingerprint); None before versions were recorded.
    fingerprint: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # Where it was sent from: 'browser' (the web page), 'cli' (`practice submit`), 'notebook' (`--submit`).
    origin: Mapped[str] = mapped_column(String(16), default=BROWSER, server_default=BROWSER)
    # The learner's one-line note on this attempt (web/timeline.py: NOTE_CHARS at most), shown on their timeline.
    note: Mapped[str | None] = mapped_column(String(200), nullable=True)

    __table_args__ = (Index("ix_learner_exercise", "learner_id", "exercise_id"), Index("ix_status", "status"))


class FactsRow(Base):
    """What the judge measured of a submission (web/attempt_facts.py), stored with its first report."""

    __tablename__ = "submission_facts"

    submission_id: Mapped[str] = mapped_column(String(32), ForeignKey(
        "submissions.id", name="fk_submission_facts_submission", ondelete="CASCADE"), primary_key=True)
    facts_json: Mapped[str] = mapped_column(Text)


class QuestionRow(Base):
    """A question about a learner's accepted submission, with the answer measured by compiling it
    (judge/parent/questions.py; `question_json` holds the answer, never sent before it is found)."""

    __tablename__ = "submission_questions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    submission_id: Mapped[str] = mapped_column(String(32), ForeignKey(
        "submissions.id", name="fk_submission_questions_submission", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)  # 1, 2, 3 within the submission
    question_json: Mapped[str] = mapped_column(Text)
    wrong: Mapped[int] = mapped_column(Integer, default=0, server_default="0")  # distinct wrong answers
    solved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    __table_args__ = (Index("ix_submission_questions_number", "submission_id", "number", unique=True),)


class AnswerRow(Base):
    """An answer a learner gave to a question: each distinct answer once (the same answer sent again counts once)."""

    __tablename__ = "question_answers"

    question_id: Mapped[str] = mapped_column(String(32), ForeignKey(
        "submission_questions.id", name="fk_question_answers_question", ondelete="CASCADE"), primary_key=True)
    answer: Mapped[str] = mapped_column(String(32), primary_key=True)
    correct: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class QuestionRuleRow(Base):
    """A class's rule for an exercise: whether "solved" also needs every question about the accepted file answered."""

    __tablename__ = "question_rules"

    class_id: Mapped[str] = mapped_column(String(32), ForeignKey("classes.id", name="fk_question_rules_class",
                                                                 ondelete="CASCADE"), primary_key=True)
    exercise_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    require_questions: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")


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


class InstructorRow(Base):
    """An instructor account (`practice admin add-instructor`); the password is an Argon2 hash."""

    __tablename__ = "instructors"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    username: Mapped[str] = mapped_column(String(64))
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    # Carried in the instructor's signed cookie; sign-out and a new password raise it (web/sessions.py).
    session_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    __table_args__ = (Index("ix_instructors_username", "username", unique=True),)


class ClassRow(Base):
    """A class: learners join it through `/join/<join_code>`; its instructors see their progress."""

    __tablename__ = "classes"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    join_code: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    __table_args__ = (Index("ix_classes_join_code", "join_code", unique=True),)


class ClassInstructorRow(Base):
    """Who may see a class (its creator, and instructors the creator added)."""

    __tablename__ = "class_instructors"

    class_id: Mapped[str] = mapped_column(String(32), ForeignKey("classes.id", name="fk_class_instructors_class",
                                                                 ondelete="CASCADE"), primary_key=True)
    instructor_id: Mapped[str] = mapped_column(String(32), ForeignKey(
        "instructors.id", name="fk_class_instructors_instructor", ondelete="CASCADE"), primary_key=True)


class MemberRow(Base):
    """A learner in a class, under a display name unique in that class (compared case-insensitively: `name_key`)."""

    __tablename__ = "class_members"

    class_id: Mapped[str] = mapped_column(String(32), ForeignKey("classes.id", name="fk_class_members_class",
                                                                 ondelete="CASCADE"), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(64), ForeignKey("learners.id", name="fk_class_members_learner"),
                                            primary_key=True)
    display_name: Mapped[str] = mapped_column(String(64))
    name_key: Mapped[str] = mapped_column(String(64))
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    __table_args__ = (Index("ix_class_members_name", "class_id", "name_key", unique=True),
                      Index("ix_class_members_learner_id", "learner_id"))


class RegradeRow(Base):
    """A submission graded again under a newer exercise version; the submission's first report stays as it was.

    One row per (submission, fingerprint): asking again for the same version grades nothing twice.
    """

    __tablename__ = "regrades"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    submission_id: Mapped[str] = mapped_column(String(32), ForeignKey("submissions.id", name="fk_regrades_submission",
                                                                      ondelete="CASCADE"))
    exercise_id: Mapped[str] = mapped_column(String(128))
    fingerprint: Mapped[str] = mapped_column(String(64))  # the version asked for
    reason: Mapped[str] = mapped_column(Text, default="")
    requested_by: Mapped[str] = mapped_column(String(64), default="")
    status: Mapped[str] = mapped_column(String(16), default=QUEUED)
    verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    report_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (Index("ix_regrades_submission_fingerprint", "submission_id", "fingerprint", unique=True),
                      Index("ix_regrades_exercise", "exercise_id"), Index("ix_regrades_status", "status"))


class DeadlineRow(Base):
    """When a class's exercise is due; `refuse_late` refuses submissions after it (by default they are only marked)."""

    __tablename__ = "deadlines"

    class_id: Mapped[str] = mapped_column(String(32), ForeignKey("classes.id", name="fk_deadlines_class",
                                                                 ondelete="CASCADE"), primary_key=True)
    exercise_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    refuse_late: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")


class ExtensionRow(Base):
    """One learner's later deadline for a class's exercise."""

    __tablename__ = "deadline_extensions"

    class_id: Mapped[str] = mapped_column(String(32), ForeignKey("classes.id", name="fk_extensions_class",
                                                                 ondelete="CASCADE"), primary_key=True)
    exercise_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(64), ForeignKey("learners.id", name="fk_extensions_learner"),
                                            primary_key=True)
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class LtiKeyRow(Base):
    """The tool's own RSA key (PEM), published at /lti/jwks; the newest signs the tool's assertions."""

    __tablename__ = "lti_keys"

    kid: Mapped[str] = mapped_column(String(64), primary_key=True)
    private_pem: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class LtiPlatformRow(Base):
    """An LMS registered with the tool: its issuer, the client id it gave the tool, and its endpoints."""

    __tablename__ = "lti_platforms"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    issuer: Mapped[str] = mapped_column(String(255))
    client_id: Mapped[str] = mapped_column(String(255))
    auth_login_url: Mapped[str] = mapped_column(String(1000))
    auth_token_url: Mapped[str] = mapped_column(String(1000))
    jwks_url: Mapped[str] = mapped_column(String(1000))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    __table_args__ = (Index("ix_lti_platforms_issuer_client", "issuer", "client_id", unique=True),)


class LtiDeploymentRow(Base):
    """A deployment of the tool on a platform, and the class its launches join."""

    __tablename__ = "lti_deployments"

    platform_id: Mapped[str] = mapped_column(String(32), ForeignKey(
        "lti_platforms.id", name="fk_lti_deployments_platform", ondelete="CASCADE"), primary_key=True)
    deployment_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    class_id: Mapped[str] = mapped_column(String(32), ForeignKey("classes.id", name="fk_lti_deployments_class",
                                                                 ondelete="CASCADE"))


class LtiStateRow(Base):
    """An OIDC login used by a verified launch (its state and nonce), kept an hour so a replay is refused; a login in
    progress lives in its browser's cookie (web/lti/login_cookie.py), never here."""

    __tablename__ = "lti_states"

    state: Mapped[str] = mapped_column(String(64), primary_key=True)
    nonce: Mapped[str] = mapped_column(String(64))
    platform_id: Mapped[str] = mapped_column(String(32), ForeignKey(
        "lti_platforms.id", name="fk_lti_states_platform", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (Index("ix_lti_states_nonce", "nonce", unique=True),)


class LtiUserRow(Base):
    """An LMS user (the platform's `sub`) as a learner of this judge."""

    __tablename__ = "lti_users"

    platform_id: Mapped[str] = mapped_column(String(32), ForeignKey(
        "lti_platforms.id", name="fk_lti_users_platform", ondelete="CASCADE"), primary_key=True)
    sub: Mapped[str] = mapped_column(String(255), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(64), ForeignKey("learners.id", name="fk_lti_users_learner"))


class LtiGradeRow(Base):
    """Where a learner's score on an exercise goes (an AGS line item), and the score last sent there."""

    __tablename__ = "lti_grades"

    platform_id: Mapped[str] = mapped_column(String(32), ForeignKey(
        "lti_platforms.id", name="fk_lti_grades_platform", ondelete="CASCADE"), primary_key=True)
    lineitem: Mapped[str] = mapped_column(String(1000), primary_key=True)
    sub: Mapped[str] = mapped_column(String(255), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(64))
    exercise_id: Mapped[str] = mapped_column(String(128))
    sent_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (Index("ix_lti_grades_learner_exercise", "learner_id", "exercise_id"),)
class SignInFailureRow(Base):
    """Failed sign-ins of one account name, of one name from one client address, or of one client address, for
    backoff; and the addresses an account signed in from (web/throttle.py)."""

    __tablename__ = "signin_failures"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)  # 'account:', 'address:', 'name-from:', 'known:'
    failures: Mapped[int] = mapped_column(Integer, default=0)
    last_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    blocked_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class LearnerTokenRow(Base):
    """A learner's token for `practice submit` and the notebook's `--submit` (an `Authorization: Bearer` header).

    Only its SHA-256 is kept. The learner makes one on `/me` or with `practice login` and their sign-in link,
    and revokes it there; their instructor can reissue it (every earlier token of the learner is revoked).
    """

    __tablename__ = "learner_tokens"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(64), ForeignKey("learners.id", name="fk_learner_tokens_learner",
                                                                   ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64))
    label: Mapped[str] = mapped_column(String(100))
    created_by: Mapped[str] = mapped_column(String(16))  # 'learner' or 'instructor'
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (Index("ix_learner_tokens_token_hash", "token_hash", unique=True),)
