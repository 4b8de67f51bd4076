"""The tool's configuration as an LMS administrator pastes it: every URL the platform needs, in one JSON document.

`GET /lti/config.json` answers it (the keys as a JWKS URL, never a key pasted by hand). Its shape is the one
Canvas's "Paste JSON" developer key takes (title, oidc_initiation_url, target_link_uri, public_jwk_url, scopes,
placements with LtiDeepLinkingRequest); Moodle and others take the same values field by field ("Tool URL", "Initiate
login URL", "Redirection URI(s)", "Public keyset URL"), which `redirect_uris` and `messages` list too.
"""

from __future__ import annotations

from web.lti.launch import DEEP_LINKING, MEMBERSHIP_SCOPE, RESOURCE_LINK, SCORE_SCOPE

TITLE = "torch.compile practice"
LINEITEM_SCOPES = ("https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",)


def tool_configuration(base_url: str) -> dict:
    """The configuration for a server reached at `base_url` (e.g. https://practice.example)."""
    base = base_url.rstrip("/")
    launch, login, jwks = f"{base}/lti/launch", f"{base}/lti/login", f"{base}/lti/jwks"
    return {
        "title": TITLE,
        "description": "Practice torch.compile: exercises graded by the judge, scores sent back to the LMS.",
        "oidc_initiation_url": login,
        "target_link_uri": launch,
        "redirect_uris": [launch],
        "public_jwk_url": jwks,
        "scopes": [SCORE_SCOPE, *LINEITEM_SCOPES, MEMBERSHIP_SCOPE],
        "messages": [{"type": RESOURCE_LINK, "target_link_uri": launch},
                     {"type": DEEP_LINKING, "target_link_uri": launch}],
        "custom_fields": {},
        "extensions": [{
            "platform": "canvas.instructure.com", "privacy_level": "public",
            "settings": {"placements": [
                {"placement": "link_selection", "message_type": DEEP_LINKING, "target_link_uri": launch},
                {"placement": "assignment_selection", "message_type": DEEP_LINKING, "target_link_uri": launch},
            ]},
        }],
    }
