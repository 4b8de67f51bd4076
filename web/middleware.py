"""One ASGI middleware for what every response needs: the learner cookie, security headers, CSRF.

- Learners are anonymous: a signed cookie (HttpOnly, SameSite=Lax) carries a random id, put in
  `request.state.learner_id` (`web/sessions.py`). A signed-in instructor's id (a second cookie) is put in
  `request.state.instructor_id`; routes check it against the database. Each session's epoch is checked against
  its account's (off the event loop): a session ended by a new link, a new password or a sign-out counts as
  no cookie. A learner's cookie older than a day is signed again, so it expires only after days unused.
- Content-Security-Policy allows only the app's own scripts, styles and connections (plus the
  editor's one <style> element, admitted by a per-response nonce).
- State-changing methods are refused (403) when the browser says the request is cross-site:
  an `Origin` that is not this host, or `Sec-Fetch-Site: cross-site|same-site`. Clients that are
  not browsers send neither and pass; SameSite keeps the cookie off cross-site requests anyway.
  `/lti/` is let through: an LMS posts its launch cross-site, and those routes trust only its signed id_token.
"""

from __future__ import annotations

import json
import secrets
from typing import Protocol
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool

from web.sessions import LEARNER_COOKIE, Cookies, LearnerSession

COOKIE = LEARNER_COOKIE
# The editor injects its own <style> element; a per-response nonce admits it and nothing else.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'nonce-{nonce}'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "frame-ancestors 'none'; form-action 'self'")
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
CROSS_SITE_PATHS = ("/lti/",)  # authenticated by a signed token, never by a cookie
# Never given a learner cookie: a monitor's probe, or a page's stylesheets and scripts. A first visit's parallel
# requests would each set a different new learner, and whichever response came last would decide who submits.
NO_LEARNER_PATHS = ("/healthz", "/static/")


class SessionEpochs(Protocol):
    def sessions_current(self, learner: LearnerSession | None,
                         instructor: tuple[str, int] | None) -> tuple[bool, bool]: ...


class LearnerMiddleware:
    def __init__(self, app, cookies: Cookies, sessions: SessionEpochs):
        self.app = app
        self.cookies = cookies
        self.sessions = sessions

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if (scope["method"] not in SAFE_METHODS and not scope["path"].startswith(CROSS_SITE_PATHS)
                and _cross_site(headers)):
            return await _forbidden(send)
        cookies = self.cookies.parse(headers.get("cookie", ""))
        session, instructor = self.cookies.learner(cookies), self.cookies.instructor(cookies)
        if session is not None or instructor is not None:
            learner_ok, instructor_ok = await run_in_threadpool(self.sessions.sessions_current, session, instructor)
            session, instructor = (session if learner_ok else None), (instructor if instructor_ok else None)
        is_new = session is None
        # A missing, tampered, expired or ended cookie gets a new learner.
        session = session or LearnerSession(secrets.token_hex(16))
        renew = (is_new or self.cookies.needs_renewal(session)) and not scope["path"].startswith(NO_LEARNER_PATHS)
        learner_id = session.learner_id
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {}).update(learner_id=learner_id, learner_session=session, csp_nonce=nonce,
                                             instructor_id=instructor[0] if instructor else None)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                # A route may send its own policy, made from CSP (web.lti's deep-link return form posts to the LMS).
                own = any(k == b"content-security-policy" for k, _ in headers)
                extra = [*([] if own else [(b"content-security-policy", CSP.format(nonce=nonce).encode())]),
                         *SECURITY_HEADERS]
                # A route that signed a learner in set the cookie itself.
                if renew and not any(k == b"set-cookie" and v.startswith(f"{COOKIE}=".encode()) for k, v in headers):
                    cookie = self.cookies.renewed_learner_header(session)
                    extra.append((b"set-cookie", cookie.encode("latin-1")))
                message = {**message, "headers": headers + extra}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _cross_site(headers: dict[str, str]) -> bool:
    if headers.get("sec-fetch-site") in ("cross-site", "same-site"):
        return True
    origin = headers.get("origin")
    if origin is None:
        return False
    return origin == "null" or urlsplit(origin).netloc != headers.get("host", "")


async def _forbidden(send) -> None:
    body = json.dumps({"detail": "cross-site request refused"}).encode()
    await send({"type": "http.response.start", "status": 403,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                + SECURITY_HEADERS})
    await send({"type": "http.response.body", "body": body})
