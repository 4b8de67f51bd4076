"""Verifying a launch: the platform's id_token (a JWT signed with a key of its JWKS), its nonce, its deployment.

Every refusal is an `LtiRefused` with a status and a message that says what is wrong and what to do.
"""

from __future__ import annotations

import threading
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

import jwt

from web.lti.registry import Login, LtiRegistry, Platform

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
MEMBERSHIP_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
DEEP_LINKING_CLAIM = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
RESOURCE_LINK = "LtiResourceLinkRequest"
DEEP_LINKING = "LtiDeepLinkingRequest"
INSTRUCTOR_ROLES = ("membership#Instructor", "membership#Administrator", "institution/person#Administrator")
HTTP_TIMEOUT_S = 10
MAX_SUB = 255  # lti_users.sub
LEEWAY_S = 60


class LtiRefused(Exception):
    """A launch or login that is refused; `status` is the HTTP status, the message says what to fix."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Launch:
    """A verified launch: a resource link (`message_type` RESOURCE_LINK) or a deep-linking request (DEEP_LINKING,
    with the platform's `deep_linking` settings: where to return the chosen exercise)."""

    platform: Platform
    deployment_id: str
    class_id: str
    sub: str
    name: str
    exercise_id: str | None
    lineitem: str | None
    message_type: str = RESOURCE_LINK
    roles: tuple[str, ...] = ()
    memberships_url: str | None = None  # Names and Role Provisioning Services: the context's roster
    deep_linking: dict | None = None

    @property
    def instructor(self) -> bool:
        return any(role.endswith(INSTRUCTOR_ROLES) for role in self.roles)


class KeySets:
    """One `jwt.PyJWKClient` per platform JWKS URL (keys cached; fetched again for an unknown kid)."""

    def __init__(self):
        self._clients: dict[str, jwt.PyJWKClient] = {}
        self._lock = threading.Lock()

    def key_for(self, platform: Platform, token: str):
        with self._lock:
            client = self._clients.get(platform.jwks_url)
            if client is None:
                client = jwt.PyJWKClient(platform.jwks_url, cache_keys=True, timeout=HTTP_TIMEOUT_S)
                self._clients[platform.jwks_url] = client
        try:
            return client.get_signing_key_from_jwt(token).key
        except jwt.PyJWKClientConnectionError as exc:
            raise LtiRefused(502, f"cannot read the platform's key set at {platform.jwks_url} ({exc}): check the "
                                  "platform's JWKS URL (`practice lti platforms`)") from None
        except (jwt.PyJWKClientError, jwt.DecodeError) as exc:
            raise LtiRefused(401, f"the id_token's key is not in the platform's key set at {platform.jwks_url} "
                                  f"({exc}): the platform must sign with a key it publishes") from None


def exercise_of(claims: dict) -> str | None:
    """The exercise a launch opens: the custom parameter `exercise`, else a target link `/exercises/<id>`."""
    custom = claims.get(CLAIM + "custom") or {}
    if isinstance(custom, dict) and isinstance(custom.get("exercise"), str):
        return custom["exercise"].strip() or None
    path = urlsplit(str(claims.get(CLAIM + "target_link_uri") or "")).path.rstrip("/")
    parts = path.split("/")
    if len(parts) >= 2 and parts[-2] == "exercises":
        return parts[-1]
    return None


NOT_THIS_BROWSER = ("this launch was not started in this browser, or its login expired: the login (/lti/login) and "
                    "the launch must happen in the same browser within 10 minutes. Start the launch again from the "
                    "LMS; if this keeps happening, the browser blocks this site's cookies inside the LMS's page: "
                    "open the tool in a new window")


def verify_launch(registry: LtiRegistry, keys: KeySets, id_token: str, state: str, login: Login | None) -> Launch:
    """Check the launch end to end, consuming its login state; `login`: the login of `state` that this browser
    started (its cookie, web.lti.login_cookie), None when it started none. `LtiRefused` says why one is refused."""
    if not id_token or not state:
        raise LtiRefused(400, "the launch carries no id_token or state: start it from the LMS (the platform posts "
                              "both to /lti/launch after the login at /lti/login)")
    if login is None or login.state != state:
        raise LtiRefused(403, NOT_THIS_BROWSER)
    platform = registry.platform(login.platform_id)
    try:
        algorithm = jwt.get_unverified_header(id_token).get("alg")
    except jwt.DecodeError as exc:
        raise LtiRefused(400, f"the id_token is not a JWT ({exc})") from None
    if algorithm != "RS256":
        raise LtiRefused(401, f"the id_token is signed with {algorithm!r}; LTI 1.3 requires RS256")
    key = keys.key_for(platform, id_token)
    try:
        claims = jwt.decode(id_token, key, algorithms=["RS256"], audience=platform.client_id, issuer=platform.issuer,
                            leeway=LEEWAY_S, options={"require": ["exp", "iat", "sub", "nonce", "aud", "iss"]})
    except jwt.InvalidSignatureError:
        raise LtiRefused(401, "bad signature: the id_token does not verify against the platform's key set at "
                              f"{platform.jwks_url}; it was not signed by the registered platform") from None
    except jwt.InvalidAudienceError:
        raise LtiRefused(401, f"the id_token is not for this tool: its audience is not client id "
                              f"{platform.client_id}") from None
    except jwt.InvalidTokenError as exc:
        raise LtiRefused(401, f"the id_token is not valid: {exc}") from None
    audience = claims["aud"]
    if isinstance(audience, list) and len(audience) > 1 and claims.get("azp") != platform.client_id:
        raise LtiRefused(401, "the id_token names several audiences and its azp is not this tool's client id")
    if claims["nonce"] != login.nonce:
        raise LtiRefused(401, "the id_token's nonce is not the one this login sent: start the launch again from "
                              "the LMS")
    if not registry.consume_state(login):
        raise LtiRefused(401, "replayed launch: this login's nonce was used already; start the launch again from "
                              "the LMS")
    sub = claims["sub"]
    if not isinstance(sub, str) or not 0 < len(sub) <= MAX_SUB or any(unicodedata.category(c) in ("Cc", "Cs")
                                                                     for c in sub):
        raise LtiRefused(400, f"the id_token's sub is not a user id this tool takes (a string of 1 to {MAX_SUB} "
                              "characters without control characters): the LMS must send its user's stable id")
    if claims.get(CLAIM + "version") != "1.3.0":
        raise LtiRefused(400, f"LTI version {claims.get(CLAIM + 'version')!r}: this tool speaks LTI 1.3.0")
    message_type = claims.get(CLAIM + "message_type")
    if message_type not in (RESOURCE_LINK, DEEP_LINKING):
        raise LtiRefused(400, f"message type {message_type!r}: this tool takes {RESOURCE_LINK} and {DEEP_LINKING} "
                              "launches")
    settings = claims.get(DEEP_LINKING_CLAIM)
    if message_type == DEEP_LINKING and not (isinstance(settings, dict) and
                                              str(settings.get("deep_link_return_url", "")).startswith("http")):
        raise LtiRefused(400, "a deep-linking request without deep_linking_settings.deep_link_return_url: the "
                              "platform must say where the chosen exercise goes")
    deployment_id = str(claims.get(CLAIM + "deployment_id") or "")
    class_id = registry.deployment_class(platform.id, deployment_id)
    if class_id is None:
        raise LtiRefused(403, f"unknown deployment {deployment_id!r} of platform {platform.issuer}: register it "
                              f"with `practice lti add-deployment --issuer {platform.issuer} --deployment-id "
                              f"{deployment_id or 'ID'} --class CLASS_ID`")
    name = str(claims.get("name") or " ".join(str(claims.get(k) or "") for k in ("given_name", "family_name")))
    ags = claims.get(AGS_CLAIM) or {}
    lineitem = ags.get("lineitem") if isinstance(ags, dict) and SCORE_SCOPE in (ags.get("scope") or []) else None
    roles = claims.get(CLAIM + "roles") or []
    nrps = claims.get(NRPS_CLAIM) or {}
    memberships = nrps.get("context_memberships_url") if isinstance(nrps, dict) else None
    return Launch(platform, deployment_id, class_id, sub, name.strip(),
                  exercise_of(claims) if message_type == RESOURCE_LINK else None,
                  lineitem if isinstance(lineitem, str) else None, message_type,
                  tuple(str(r) for r in roles) if isinstance(roles, list) else (),
                  memberships if isinstance(memberships, str) and memberships.startswith("http") else None,
                  settings if message_type == DEEP_LINKING else None)
