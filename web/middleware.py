"""One ASGI middleware for what every response needs: the learner cookie, security headers, CSRF.

- Learners are anonymous: a signed cookie (HttpOnly, SameSite=Lax) carries a random id, put in
  `request.state.learner_id`.
- Content-Security-Policy allows only the app's own scripts, styles and connections (plus the
  editor's one <style> element, admitted by a per-response nonce).
- State-changing methods are refused (403) when the browser says the request is cross-site:
  an `Origin` that is not this host, or `Sec-Fetch-Site: cross-site|same-site`. Clients that are
  not browsers send neither and pass; SameSite keeps the cookie off cross-site requests anyway.
"""

from __future__ import annotations

import json
import secrets
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

from itsdangerous import BadSignature, Signer

COOKIE = "practice_learner"
COOKIE_MAX_AGE = 365 * 24 * 3600
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


class LearnerMiddleware:
    def __init__(self, app, secret_key: str, secure: bool = False):
        self.app = app
        self.signer = Signer(secret_key, salt="practice-learner")
        self.secure = secure

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if scope["method"] not in SAFE_METHODS and _cross_site(headers):
            return await _forbidden(send)
        learner_id, is_new = self._learner(headers.get("cookie", ""))
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {}).update(learner_id=learner_id, csp_nonce=nonce)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                extra = [(b"content-security-policy", CSP.format(nonce=nonce).encode()), *SECURITY_HEADERS]
                if is_new:
                    extra.append((b"set-cookie", self._cookie(learner_id).encode("latin-1")))
                message = {**message, "headers": list(message.get("headers", [])) + extra}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _learner(self, cookie_header: str) -> tuple[str, bool]:
        cookies = SimpleCookie()
        try:
            cookies.load(cookie_header)
        except Exception:  # a malformed Cookie header gets a new learner, not an error
            cookies = SimpleCookie()
        morsel = cookies.get(COOKIE)
        if morsel is not None:
            try:
                return self.signer.unsign(morsel.value).decode("ascii"), False
            except (BadSignature, UnicodeDecodeError):
                pass
        return secrets.token_hex(16), True

    def _cookie(self, learner_id: str) -> str:
        value = self.signer.sign(learner_id).decode("ascii")
        parts = [f"{COOKIE}={value}", "Path=/", f"Max-Age={COOKIE_MAX_AGE}", "HttpOnly", "SameSite=Lax"]
        if self.secure:
            parts.append("Secure")
        return "; ".join(parts)


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
