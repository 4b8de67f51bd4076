"""The two signed cookies: the learner's id (anonymous, kept a year) and an instructor's session (12 hours).

Both are signed with the app's secret key (itsdangerous), HttpOnly and SameSite=Lax; the instructor's also
carries its signing time, so an old session expires even if the browser keeps the cookie. Signing in as a
learner elsewhere (password or personal link) replaces the learner cookie with that learner's id.
"""

from __future__ import annotations

from itsdangerous import BadSignature, Signer, TimestampSigner
from starlette.requests import cookie_parser

LEARNER_COOKIE = "practice_learner"
LEARNER_MAX_AGE = 365 * 24 * 3600
INSTRUCTOR_COOKIE = "practice_instructor"
INSTRUCTOR_MAX_AGE = 12 * 3600


class Cookies:
    """Reads and writes the signed cookies; one per app (the middleware and the sign-in routes share it)."""

    def __init__(self, secret_key: str, secure: bool = False):
        self.learner_signer = Signer(secret_key, salt="practice-learner")
        self.instructor_signer = TimestampSigner(secret_key, salt="practice-instructor")
        self.secure = secure

    @staticmethod
    def parse(cookie_header: str) -> dict[str, str]:
        """Every `name=value` pair of the header. Other apps on the same host (any port) share it, so a pair the
        standard library's strict parser dislikes (`prefs={"theme":"dark"}`) is kept or skipped, never a reason to
        drop the learner's own cookie (Starlette's browser-compatible parser)."""
        return cookie_parser(cookie_header)

    def learner(self, cookies: dict[str, str]) -> str | None:
        value = cookies.get(LEARNER_COOKIE)
        try:
            return self.learner_signer.unsign(value).decode("ascii") if value else None
        except (BadSignature, UnicodeDecodeError):
            return None

    def instructor(self, cookies: dict[str, str]) -> str | None:
        value = cookies.get(INSTRUCTOR_COOKIE)
        try:
            return self.instructor_signer.unsign(value, max_age=INSTRUCTOR_MAX_AGE).decode("ascii") if value else None
        except (BadSignature, UnicodeDecodeError):
            return None

    def learner_header(self, learner_id: str) -> str:
        return self._header(LEARNER_COOKIE, self.learner_signer.sign(learner_id).decode("ascii"), LEARNER_MAX_AGE)

    def instructor_header(self, instructor_id: str) -> str:
        value = self.instructor_signer.sign(instructor_id).decode("ascii")
        return self._header(INSTRUCTOR_COOKIE, value, INSTRUCTOR_MAX_AGE)

    def clear_instructor_header(self) -> str:
        return self._header(INSTRUCTOR_COOKIE, "", 0)

    def _header(self, name: str, value: str, max_age: int) -> str:
        parts = [f"{name}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly", "SameSite=Lax"]
        if self.secure:
            parts.append("Secure")
        return "; ".join(parts)
