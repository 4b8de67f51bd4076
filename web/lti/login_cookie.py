"""The OIDC logins a browser started, kept in that browser: a signed cookie set by /lti/login, read by the launch.

A launch is accepted only with the cookie of the login it names (its `state`), so a launch posted from a browser
that did not start the login (a victim's browser made to post an attacker's id_token, a copied form) is refused;
and an anonymous /lti/login costs the server nothing (no database row). The cookie holds the newest `MAX_PENDING`
logins still fresh (several tabs may launch at once), signed with the app's secret key and the signing time.

The platform posts the launch cross-site: with `cookie_secure` the cookie is `SameSite=None; Secure` so it comes
along; without (plain HTTP, tests), it carries no SameSite attribute, which browsers send on a top-level cross-site
POST in the minutes after it was set.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone

from itsdangerous import BadSignature, TimestampSigner

from web.lti.registry import STATE_LIFETIME, Login

LOGIN_COOKIE = "practice_lti_login"
MAX_PENDING = 4


class LoginCookies:
    def __init__(self, secret_key: str, secure: bool = False):
        self.signer = TimestampSigner(secret_key, salt="practice-lti-login")
        self.secure = secure

    def pending(self, cookies: dict[str, str]) -> list[Login]:
        """The fresh logins of this browser, oldest first (none when the cookie is missing, forged or too old)."""
        value = cookies.get(LOGIN_COOKIE, "")
        try:
            payload = self.signer.unsign(value, max_age=int(STATE_LIFETIME.total_seconds()))
            items = json.loads(base64.urlsafe_b64decode(payload))
        except (BadSignature, ValueError):
            return []
        now = datetime.now(timezone.utc)
        logins = [Login(i["state"], i["nonce"], i["platform"], datetime.fromtimestamp(i["at"], timezone.utc), None)
                  for i in items if isinstance(i, dict)]
        return [login for login in logins if login.created_at > now - STATE_LIFETIME]

    def find(self, cookies: dict[str, str], state: str) -> Login | None:
        return next((login for login in self.pending(cookies) if login.state == state), None)

    def header(self, logins: list[Login]) -> str:
        """The Set-Cookie header keeping `logins` (the newest MAX_PENDING); none left clears the cookie."""
        kept = logins[-MAX_PENDING:]
        payload = json.dumps([{"state": x.state, "nonce": x.nonce, "platform": x.platform_id,
                               "at": x.created_at.timestamp()} for x in kept], separators=(",", ":"))
        value = self.signer.sign(base64.urlsafe_b64encode(payload.encode())).decode("ascii") if kept else ""
        max_age = int(STATE_LIFETIME.total_seconds()) if kept else 0
        parts = [f"{LOGIN_COOKIE}={value}", "Path=/lti/", f"Max-Age={max_age}", "HttpOnly"]
        parts += ["SameSite=None", "Secure"] if self.secure else []
        return "; ".join(parts)
