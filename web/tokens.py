"""Learners' tokens for `practice submit` and the notebook's `--submit`: issue, look up, revoke, reissue.

A token is `tp_` and 32 random bytes; only its SHA-256 is stored. It stands for the learner the way their
cookie does in the browser: the same submissions, the same rate limits. A learner makes one on `/me` (or
`practice login` with their personal sign-in link makes one) and revokes it there; an instructor's reissue
revokes every earlier token of the learner and shows the new one once.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import sessionmaker

from web.passwords import new_token, token_hash
from web.store import _aware, ensure_learner
from web.tables import LearnerTokenRow, now as _now

PREFIX = "tp_"  # tells a token from a sign-in link's token (and makes it findable by secret scanners)
MAX_LABEL = 100
BY_LEARNER, BY_INSTRUCTOR = "learner", "instructor"


@dataclass(frozen=True)
class LearnerToken:
    """A token as its owner's page lists it (never the token itself)."""

    id: str
    label: str
    created_by: str
    created_at: datetime
    last_used_at: datetime | None


class TokenStore:
    """The `learner_tokens` table; every method opens and closes its own session (thread-safe)."""

    def __init__(self, engine: Engine):
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    def issue(self, learner_id: str, label: str, created_by: str = BY_LEARNER) -> str:
        """A new token for the learner (shown once: only its hash is kept)."""
        token = PREFIX + new_token()
        label = " ".join(label.split())[:MAX_LABEL] or "token"
        with self._sessions() as s, s.begin():
            ensure_learner(s.connection(), learner_id)
            s.add(LearnerTokenRow(id=uuid.uuid4().hex, learner_id=learner_id, token_hash=token_hash(token),
                                  label=label, created_by=created_by, created_at=_now()))
        return token

    def reissue(self, learner_id: str, label: str) -> str:
        """The instructor's reissue: every token of the learner is revoked, a new one is made."""
        self.revoke_all(learner_id)
        return self.issue(learner_id, label, BY_INSTRUCTOR)

    def learner_of(self, token: str) -> str | None:
        """The learner a live token stands for (and it is marked used), or None: unknown or revoked."""
        if not token.startswith(PREFIX):
            return None
        with self._sessions() as s, s.begin():
            row = s.scalar(select(LearnerTokenRow).where(LearnerTokenRow.token_hash == token_hash(token),
                                                         LearnerTokenRow.revoked_at.is_(None)))
            if row is None:
                return None
            row.last_used_at = _now()
            return row.learner_id

    def live(self, learner_id: str) -> list[LearnerToken]:
        """The learner's tokens not revoked, newest first."""
        with self._sessions() as s:
            rows = s.scalars(select(LearnerTokenRow).where(LearnerTokenRow.learner_id == learner_id,
                                                           LearnerTokenRow.revoked_at.is_(None))
                             .order_by(LearnerTokenRow.created_at.desc()))
            return [LearnerToken(r.id, r.label, r.created_by, _aware(r.created_at), _aware(r.last_used_at))
                    for r in rows]

    def revoke(self, learner_id: str, token_id: str) -> bool:
        """Revoke one of the learner's tokens; False when it is not theirs or already revoked."""
        with self._sessions() as s, s.begin():
            done = s.execute(update(LearnerTokenRow).where(
                LearnerTokenRow.id == token_id, LearnerTokenRow.learner_id == learner_id,
                LearnerTokenRow.revoked_at.is_(None)).values(revoked_at=_now()))
            return done.rowcount == 1

    def revoke_token(self, token: str) -> bool:
        """Revoke the token itself (`practice logout`)."""
        with self._sessions() as s, s.begin():
            done = s.execute(update(LearnerTokenRow).where(
                LearnerTokenRow.token_hash == token_hash(token), LearnerTokenRow.revoked_at.is_(None))
                .values(revoked_at=_now()))
            return done.rowcount == 1

    def revoke_all(self, learner_id: str) -> int:
        with self._sessions() as s, s.begin():
            return s.execute(update(LearnerTokenRow).where(LearnerTokenRow.learner_id == learner_id,
                                                           LearnerTokenRow.revoked_at.is_(None))
                             .values(revoked_at=_now())).rowcount
