"""Deep linking: an instructor picks an exercise in the LMS, the tool answers with a signed LtiDeepLinkingResponse.

A verified LtiDeepLinkingRequest (web.lti.launch) shows the course's exercises (`lti_deep_link.html`); the choice is
posted back with `context`, a short-lived token signed with the app's secret that carries what the platform sent
(its return URL, its opaque `data`, the deployment), so nothing is kept between the two requests. The answer is a
form that posts the response JWT (RS256, the tool's key, its kid published at /lti/jwks) to the return URL: one
`ltiResourceLink` to /lti/launch with the custom parameter `exercise=ID` and a line item of maximum score 1, so
that launches of the new link open the exercise and scores go to that line item.
"""

from __future__ import annotations

import secrets
import time

import jwt

from web.lti.launch import CLAIM, Launch, LtiRefused
from web.lti.registry import LtiRegistry

CONTEXT_AUDIENCE = "lti-deep-link"
CONTEXT_LIFETIME_S = 600
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
RESPONSE = "LtiDeepLinkingResponse"


def context_token(secret: str, launch: Launch) -> str:
    """What the pick page posts back: the request's settings, signed, valid CONTEXT_LIFETIME_S."""
    settings = launch.deep_linking or {}
    now = int(time.time())
    return jwt.encode({"aud": CONTEXT_AUDIENCE, "iat": now, "exp": now + CONTEXT_LIFETIME_S,
                       "platform": launch.platform.id, "deployment_id": launch.deployment_id,
                       "return_url": settings.get("deep_link_return_url"), "data": settings.get("data")},
                      secret, algorithm="HS256")


def read_context(secret: str, token: str) -> dict:
    try:
        return jwt.decode(token, secret, algorithms=["HS256"], audience=CONTEXT_AUDIENCE)
    except jwt.ExpiredSignatureError:
        raise LtiRefused(400, "this exercise picker has expired (10 minutes): open it again from the LMS") from None
    except jwt.InvalidTokenError:
        raise LtiRefused(400, "the exercise picker's context is not valid: open it again from the LMS") from None


def response_token(registry: LtiRegistry, context: dict, base_url: str, exercise_id: str,
                   title: str) -> tuple[str, str]:
    """(the platform's return URL, the signed LtiDeepLinkingResponse choosing `exercise_id`)."""
    platform = registry.platform(str(context.get("platform")))
    if platform is None:
        raise LtiRefused(400, "the platform of this exercise picker is no longer registered")
    kid, pem = registry.signing_key()
    now = int(time.time())
    item = {"type": "ltiResourceLink", "title": title, "url": base_url.rstrip("/") + "/lti/launch",
            "custom": {"exercise": exercise_id},
            "lineItem": {"scoreMaximum": 1, "label": title, "resourceId": exercise_id}}
    claims = {"iss": platform.client_id, "aud": platform.issuer, "iat": now, "exp": now + 300,
              "nonce": secrets.token_urlsafe(16), CLAIM + "deployment_id": context.get("deployment_id"),
              CLAIM + "message_type": RESPONSE, CLAIM + "version": "1.3.0", DL + "content_items": [item]}
    if context.get("data") is not None:
        claims[DL + "data"] = context["data"]
    return str(context["return_url"]), jwt.encode(claims, pem, algorithm="RS256", headers={"kid": kid})
