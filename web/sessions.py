"""The two signed cookies: a learner's session and an instructor's session, each with an expiry and an epoch.

Both are signed with the app's secret key (itsdangerous, with the signing time), HttpOnly and SameSite=Lax.
A learner's cookie carries their id, their account's session epoch and, after a personal sign-in link, until
when a new password may be set without the current one; it lasts `learner_session_days` after the last visit
(renewed at most once a day). An instructor's carries their id and epoch and lasts `instructor_session_hours`
from signing in. The epochs live in the database (`learners.session_epoch`, `instructors.session_epoch`):
raising one ends every session of that account made before (the middleware checks each request), which is
what a new sign-in link, a new password and signing out do. Signing in as a learner elsewhere (password or
personal link) replaces the learner cookie with that learner's session.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from itsdangerous import BadSignature, Signer, TimestampSigner
from starlette.requests import cookie_parser

LEARNER_COOKIE = "practice_learner"
INSTRUCTOR_COOKIE = "practice_instructor"
RENEW_AFTER_S = 24 * 3600  # a learner's cookie older than this is signed again on the next visit
# Cookies of the older format (no signing time, before 2026-12-01) are taken, and signed anew, until this moment
# (the release's date plus the default 90 days a cookie lasts): after it they are refused, so a copied one cannot
# live for ever. 2027-03-01T00:00:00Z.
LEGACY_COOKIES_UNTIL = 1803859200
LINK_RESET_S = 15 * 60  # after a sign-in link, a new password may be set without the current one this long


@dataclass(frozen=True)
class LearnerSession:
    """What a learner's cookie says: who, under which epoch, until when a password may be reset (Unix time)."""

    learner_id: str
    epoch: int = 0
    reset_until: int = 0
    signed_at: float = 0.0  # 0: a cookie of the older format, signed again on its first visit

    def may_reset_password(self) -> bool:
        return time.time() < self.reset_until


class Cookies:
    """Reads and writes the signed cookies; one per app (the middleware and the sign-in routes share it)."""

    def __init__(self, secret_key: str, secure: bool = False, learner_max_age: int = 90 * 24 * 3600,
                 instructor_max_age: int = 12 * 3600):
        self.learner_signer = TimestampSigner(secret_key, salt="practice-learner-session")
        self.legacy_learner_signer = Signer(secret_key, salt="practice-learner")  # cookies made before epochs
        self.instructor_signer = TimestampSigner(secret_key, salt="practice-instructor-session")
        self.secure = secure
        self.learner_max_age, self.instructor_max_age = learner_max_age, instructor_max_age

    @staticmethod
    def parse(cookie_header: str) -> dict[str, str]:
        """Every `name=value` pair of the header. Other apps on the same host (any port) share it, so a pair the
        standard library's strict parser dislikes (`prefs={"theme":"dark"}`) is kept or skipped, never a reason to
        drop the learner's own cookie (Starlette's browser-compatible parser)."""
        return cookie_parser(cookie_header)

    def learner(self, cookies: dict[str, str]) -> LearnerSession | None:
        """The cookie's learner session, or None when it is missing, tampered with or expired."""
        value = cookies.get(LEARNER_COOKIE)
        if not value:
            return None
        try:
            payload, signed_at = self.learner_signer.unsign(value, max_age=self.learner_max_age,
                                                            return_timestamp=True)
            learner_id, epoch, reset_until = payload.decode("ascii").split(":")
            return LearnerSession(learner_id, int(epoch), int(reset_until), signed_at.timestamp())
        except (BadSignature, UnicodeDecodeError, ValueError):
            pass
        if time.time() >= LEGACY_COOKIES_UNTIL:
            return None
        try:
            return LearnerSession(self.legacy_learner_signer.unsign(value).decode("ascii"))
        except (BadSignature, UnicodeDecodeError):
            return None

    def instructor(self, cookies: dict[str, str]) -> tuple[str, int] | None:
        """(instructor id, epoch) of the cookie, or None when it is missing, tampered with or expired."""
        value = cookies.get(INSTRUCTOR_COOKIE)
        try:
            instructor_id, epoch = self.instructor_signer.unsign(
                value, max_age=self.instructor_max_age).decode("ascii").split(":") if value else (None, 0)
            return (instructor_id, int(epoch)) if instructor_id else None
        except (BadSignature, UnicodeDecodeError, ValueError):
            return None

    def needs_renewal(self, session: LearnerSession) -> bool:
        return time.time() - session.signed_at > RENEW_AFTER_S

    def learner_header(self, learner_id: str, epoch: int = 0, reset_until: int = 0) -> str:
        value = self.learner_signer.sign(f"{learner_id}:{epoch}:{reset_until}").decode("ascii")
        return self._header(LEARNER_COOKIE, value, self.learner_max_age)

    def renewed_learner_header(self, session: LearnerSession) -> str:
        return self.learner_header(session.learner_id, session.epoch, session.reset_until)

    def clear_learner_header(self) -> str:
        return self._header(LEARNER_COOKIE, "", 0)

    def instructor_header(self, instructor_id: str, epoch: int) -> str:
        value = self.instructor_signer.sign(f"{instructor_id}:{epoch}").decode("ascii")
        return self._header(INSTRUCTOR_COOKIE, value, self.instructor_max_age)

    def clear_instructor_header(self) -> str:
        return self._header(INSTRUCTOR_COOKIE, "", 0)

    def _header(self, name: str, value: str, max_age: int) -> str:
        parts = [f"{name}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly", "SameSite=Lax"]
        if self.secure:
            parts.append("Secure")
        return "; ".join(parts)
