"""One ASGI middleware for what every response needs: the learner cookie, security headers, CSRF.

- Learners are anonymous: a signed cookie (HttpOnly, SameSite=Lax) carries a random id, put in
  `request.state.learner_id` (`web/sessions.py`). A signed-in instructor's id (a second cookie) is put in
  `request.state.instructor_id`; routes check it against the database.
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
from urllib.parse import urlsplit

from web.sessions import LEARNER_COOKIE, Cookies

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


class LearnerMiddleware:
    def __init__(self, app, cookies: Cookies):
        self.app = app
        self.cookies = cookies

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if (scope["method"] not in SAFE_METHODS and not scope["path"].startswith(CROSS_SITE_PATHS)
                and _cross_site(headers)):
            return await _forbidden(send)
        cookies = self.cookies.parse(headers.get("cookie", ""))
        learner_id = self.cookies.learner(cookies)
        is_new = learner_id is None
        learner_id = learner_id or secrets.token_hex(16)  # a missing or tampered cookie gets a new learner
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {}).update(learner_id=learner_id, csp_nonce=nonce,
                                             instructor_id=self.cookies.instructor(cookies))

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                # A route may send its own policy, made from CSP (web.lti's deep-link return form posts to the LMS).
                own = any(k == b"content-security-policy" for k, _ in headers)
                extra = [*([] if own else [(b"content-security-policy", CSP.format(nonce=nonce).encode())]),
                         *SECURITY_HEADERS]
                # A route that signed a learner in set the cookie itself.
                if is_new and not any(k == b"set-cookie" and v.startswith(f"{COOKIE}=".encode()) for k, v in headers):
                    extra.append((b"set-cookie", self.cookies.learner_header(learner_id).encode("latin-1")))
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
