"""What LTI needs stored: the tool's RSA key, platforms and deployments, OIDC logins, LMS users, grade targets.

Platforms and deployments are registered by the operator (`practice lti ...`); the rest is written by
launches. A login's state is used once (`consume_state`): a replayed launch finds it used and is refused.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import CursorResult, delete, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from web.classes import MAX_DISPLAY_NAME, _key, display_name_of
from web.errors import InputError
from web.i18n import N_
from web.store import ensure_learner
from web.tables import (
    ClassRow,
    LtiDeploymentRow,
    LtiGradeRow,
    LtiKeyRow,
    LtiPlatformRow,
    LtiStateRow,
    LtiUserRow,
    MemberRow,
    now as _now,
)

STATE_LIFETIME = timedelta(minutes=10)


@dataclass(frozen=True)
class Platform:
    id: str
    issuer: str
    client_id: str
    auth_login_url: str
    auth_token_url: str
    jwks_url: str

    @classmethod
    def of(cls, row: LtiPlatformRow) -> Platform:
        return cls(row.id, row.issuer, row.client_id, row.auth_login_url, row.auth_token_url, row.jwks_url)


@dataclass(frozen=True)
class Login:
    state: str
    nonce: str
    platform_id: str
    created_at: datetime
    used_at: datetime | None


@dataclass(frozen=True)
class GradeTarget:
    platform: Platform
    lineitem: str
    sub: str
    sent_score: float | None


def _url(value: str, field: str) -> str:
    value = value.strip()
    if not value.startswith(("https://", "http://")):
        raise InputError(N_("{field} must be an http(s) URL, got {value}."), field=field, value=value)
    return value


class LtiRegistry:
    """LTI's tables; every method opens and closes its own session (thread-safe)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    # ---- the tool's key ---------------------------------------------------------------------------
    def signing_key(self) -> tuple[str, str]:
        """(kid, private key PEM) of the newest key; one is made on first use."""
        with self._sessions() as s:
            row = s.scalar(select(LtiKeyRow).order_by(LtiKeyRow.created_at.desc()).limit(1))
            if row is not None:
                return row.kid, row.private_pem
        return self.new_key()

    def new_key(self) -> tuple[str, str]:
        """Make a new RSA key (2048 bits); it signs from now on, older ones stay published."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode("ascii")
        kid = secrets.token_hex(8)
        with self._sessions() as s, s.begin():
            s.add(LtiKeyRow(kid=kid, private_pem=pem, created_at=_now()))
        return kid, pem

    def jwks(self) -> dict:
        """The tool's public keys as a JSON Web Key Set (what platforms verify the tool's assertions with)."""
        from cryptography.hazmat.primitives import serialization
        from jwt.algorithms import RSAAlgorithm

        self.signing_key()
        keys = []
        with self._sessions() as s:
            for row in s.scalars(select(LtiKeyRow).order_by(LtiKeyRow.created_at)):
                private = serialization.load_pem_private_key(row.private_pem.encode("ascii"), password=None)
                jwk = json.loads(RSAAlgorithm.to_jwk(private.public_key()))
                keys.append({**jwk, "kid": row.kid, "alg": "RS256", "use": "sig"})
        return {"keys": keys}

    # ---- platforms and deployments ----------------------------------------------------------------
    def add_platform(self, issuer: str, client_id: str, auth_login_url: str, auth_token_url: str,
                     jwks_url: str) -> Platform:
        issuer, client_id = issuer.strip(), client_id.strip()
        if not issuer or not client_id:
            raise InputError(N_("Give the platform's issuer and the client id it gave this tool."))
        row = LtiPlatformRow(id=uuid.uuid4().hex, issuer=issuer, client_id=client_id,
                             auth_login_url=_url(auth_login_url, "auth-login-url"),
                             auth_token_url=_url(auth_token_url, "token-url"), jwks_url=_url(jwks_url, "jwks-url"),
                             created_at=_now())
        try:
            with self._sessions() as s, s.begin():
                s.add(row)
        except IntegrityError:
            raise InputError(N_("A platform with issuer {issuer} and client id {client_id} is registered already."),
                             issuer=issuer, client_id=client_id) from None
        return Platform.of(row)

    def platforms(self) -> list[Platform]:
        with self._sessions() as s:
            return [Platform.of(r) for r in s.scalars(select(LtiPlatformRow).order_by(LtiPlatformRow.created_at))]

    def platform(self, platform_id: str) -> Platform | None:
        with self._sessions() as s:
            row = s.get(LtiPlatformRow, platform_id)
            return Platform.of(row) if row else None

    def find_platform(self, issuer: str, client_id: str | None = None) -> Platform | None:
        """The platform of `issuer` (and `client_id`; without it, the only one of that issuer)."""
        query = select(LtiPlatformRow).where(LtiPlatformRow.issuer == issuer)
        if client_id:
            query = query.where(LtiPlatformRow.client_id == client_id)
        with self._sessions() as s:
            rows = list(s.scalars(query))
        return Platform.of(rows[0]) if len(rows) == 1 else None

    def add_deployment(self, platform_id: str, deployment_id: str, class_id: str) -> None:
        deployment_id = deployment_id.strip()
        if not deployment_id:
            raise InputError(N_("Give the deployment id the platform shows for this tool."))
        with self._sessions() as s, s.begin():
            if s.get(ClassRow, class_id) is None:
                raise InputError(N_("No class has the id {class_id}: the class page's address ends with it."),
                                 class_id=class_id)
            row = s.get(LtiDeploymentRow, (platform_id, deployment_id))
            if row is None:
                s.add(LtiDeploymentRow(platform_id=platform_id, deployment_id=deployment_id, class_id=class_id))
            else:
                row.class_id = class_id

    def deployment_class(self, platform_id: str, deployment_id: str) -> str | None:
        """The class a deployment's launches join, or None for a deployment not registered."""
        with self._sessions() as s:
            row = s.get(LtiDeploymentRow, (platform_id, deployment_id))
            return row.class_id if row else None

    # ---- OIDC logins ------------------------------------------------------------------------------
    @staticmethod
    def new_login(platform_id: str) -> Login:
        """A fresh state and nonce; kept in the browser's cookie (web.lti.login_cookie), not here."""
        return Login(secrets.token_urlsafe(24), secrets.token_urlsafe(24), platform_id, _now(), None)

    def consume_state(self, login: Login) -> bool:
        """Record the login as used by a verified launch; False when it was used already (a replayed launch). Only
        launches with a valid id_token get here, so strangers cannot fill the table."""
        try:
            with self._sessions() as s, s.begin():
                s.execute(delete(LtiStateRow).where(LtiStateRow.created_at < _now() - 6 * STATE_LIFETIME))
                s.add(LtiStateRow(state=login.state, nonce=login.nonce, platform_id=login.platform_id,
                                  created_at=login.created_at, used_at=_now()))
        except IntegrityError:
            return False
        return True

    # ---- users and grades -------------------------------------------------------------------------
    def learner_for(self, platform_id: str, sub: str, class_id: str, name: str) -> str:
        """The learner of this LMS user (made on the first launch), a member of the class under `name`."""
        with self._sessions() as s, s.begin():
            row = s.get(LtiUserRow, (platform_id, sub))
            if row is None:
                learner_id = secrets.token_hex(16)
                ensure_learner(s.connection(), learner_id)
                s.add(LtiUserRow(platform_id=platform_id, sub=sub, learner_id=learner_id))
            else:
                learner_id = row.learner_id
            if s.get(MemberRow, (class_id, learner_id)) is None:
                taken = set(s.scalars(select(MemberRow.name_key).where(MemberRow.class_id == class_id)))
                base = _display_name(name, sub)
                display = base
                for n in range(2, 1000):
                    if _key(display) not in taken:
                        break
                    display = f"{base[:MAX_DISPLAY_NAME - 6]} ({n})"
                s.add(MemberRow(class_id=class_id, learner_id=learner_id, display_name=display,
                                name_key=_key(display), joined_at=_now()))
        return learner_id

    def remember_grade(self, platform_id: str, lineitem: str, sub: str, learner_id: str, exercise_id: str) -> None:
        """Send this learner's score on the exercise to `lineitem` from now on."""
        with self._sessions() as s, s.begin():
            row = s.get(LtiGradeRow, (platform_id, lineitem, sub))
            if row is None:
                s.add(LtiGradeRow(platform_id=platform_id, lineitem=lineitem, sub=sub, learner_id=learner_id,
                                  exercise_id=exercise_id))
            else:
                row.learner_id, row.exercise_id = learner_id, exercise_id

    def grade_targets(self, learner_id: str, exercise_id: str) -> list[GradeTarget]:
        with self._sessions() as s:
            rows = s.execute(select(LtiGradeRow, LtiPlatformRow).join(
                LtiPlatformRow, LtiPlatformRow.id == LtiGradeRow.platform_id).where(
                LtiGradeRow.learner_id == learner_id, LtiGradeRow.exercise_id == exercise_id)).all()
        return [GradeTarget(Platform.of(p), g.lineitem, g.sub, g.sent_score) for g, p in rows]

    def claim_send(self, target: GradeTarget, score: float) -> bool:
        """Record `score` as sent to the target unless it is the score sent already; True: this caller sends it."""
        key = (LtiGradeRow.platform_id == target.platform.id, LtiGradeRow.lineitem == target.lineitem,
               LtiGradeRow.sub == target.sub)
        with self._sessions() as s, s.begin():
            done: CursorResult = s.execute(update(LtiGradeRow).where(*key, (LtiGradeRow.sent_score.is_(None))
                                                       | (LtiGradeRow.sent_score != score))
                             .values(sent_score=score, sent_at=_now(), error=None))
            return done.rowcount == 1

    def send_failed(self, target: GradeTarget, previous: float | None, error: str) -> None:
        """Undo a claim whose send failed (the next verdict tries again), keeping the error to show."""
        with self._sessions() as s, s.begin():
            s.execute(update(LtiGradeRow).where(
                LtiGradeRow.platform_id == target.platform.id, LtiGradeRow.lineitem == target.lineitem,
                LtiGradeRow.sub == target.sub).values(sent_score=previous, error=error[:2000]))


def _display_name(name: str, sub: str) -> str:
    """The LMS's name when it is one a member may have, else "LMS user" and a short digest of the user's `sub` (which
    may hold anything)."""
    try:
        return display_name_of(name)
    except InputError:
        return f"LMS user {hashlib.sha256(sub.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
