"""Names and Role Provisioning Services: the LMS course's roster read into the class.

When an instructor launches the tool and the launch carries the NRPS claim (`context_memberships_url`), the tool
asks the platform for the roster (a token for the contextmembership.readonly scope, the membership container,
its `Link: <...>; rel="next"` pages) and makes each active learner a class member under the LMS name, as their
first launch would: the class table lists the whole course before anyone has opened an exercise. Instructors and
inactive members are left out. A platform that cannot be read is logged; the launch goes on.
"""

from __future__ import annotations

import json
import logging
import re
import urllib.request

from web.lti.grades import access_token
from web.lti.launch import HTTP_TIMEOUT_S, INSTRUCTOR_ROLES, MEMBERSHIP_SCOPE
from web.lti.registry import LtiRegistry, Platform

log = logging.getLogger(__name__)
MEMBERSHIP_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
MAX_PAGES = 50
NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


def _get(url: str, token: str) -> tuple[dict, str]:
    request = urllib.request.Request(url, headers={"Accept": MEMBERSHIP_TYPE, "Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
        return json.loads(response.read()), response.headers.get("Link", "")


def read_roster(registry: LtiRegistry, platform: Platform, memberships_url: str, class_id: str) -> int:
    """Make every active learner of the roster at `memberships_url` a member of `class_id`; how many were read."""
    token = access_token(registry, platform, MEMBERSHIP_SCOPE)
    url: str | None = memberships_url
    learners = 0
    for _ in range(MAX_PAGES):
        if url is None:
            break
        body, link = _get(url, token)
        for member in body.get("members", []) if isinstance(body, dict) else []:
            if not isinstance(member, dict) or not member.get("user_id"):
                continue
            roles = [str(r) for r in member.get("roles", []) if isinstance(r, str)]
            if member.get("status", "Active") != "Active" or any(r.endswith(INSTRUCTOR_ROLES) or r == "Instructor"
                                                                 for r in roles):
                continue
            name = str(member.get("name") or " ".join(str(member.get(k) or "") for k in ("given_name",
                                                                                        "family_name"))).strip()
            registry.learner_for(platform.id, str(member["user_id"]), class_id, name)
            learners += 1
        found = NEXT_LINK.search(link)
        url = found.group(1) if found else None
    return learners


def read_roster_quietly(registry: LtiRegistry, platform: Platform, memberships_url: str, class_id: str) -> None:
    """`read_roster`, its failure logged (the launch that asked for it goes on)."""
    try:
        count = read_roster(registry, platform, memberships_url, class_id)
        log.info("LTI roster of %s: %d learners in class %s", platform.issuer, count, class_id)
    except Exception as exc:  # noqa: BLE001 - the LMS is away or refused: the class keeps whom it has
        log.warning("LTI roster at %s not read: %s", memberships_url, exc)
