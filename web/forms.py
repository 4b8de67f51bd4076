"""HTML forms: urlencoded bodies read with a cap, safe redirects, and pages that refuse (403) or find nothing (404).

Forms post to the same origin; the middleware refuses cross-site posts (Origin / Sec-Fetch-Site), as for the API.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from fastapi import HTTPException, Request
from fastapi.responses import RedirectResponse

from web.api import read_body
from web.throttle import SignInThrottled

FORM_BYTES = 16 * 1024
FORM_FIELDS = 20


class PageRefused(Exception):
    """Raised by a page route; `create_app` renders it as an HTML page with the status and the message."""

    def __init__(self, status: int, message: str, **params):
        super().__init__(message)
        self.status, self.message, self.params = status, message, params


async def read_form(request: Request, empty_ok: bool = False) -> dict[str, str]:
    """The fields of an `application/x-www-form-urlencoded` body (the last value of a repeated field); with
    `empty_ok`, a request with no body at all is an empty form (a button with no fields, posted by a script)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if empty_ok and not kind and request.headers.get("content-length", "0") == "0":
        return {}
    if kind != "application/x-www-form-urlencoded":
        raise HTTPException(415, "expected a form (application/x-www-form-urlencoded)")
    body = await read_body(request, FORM_BYTES)
    try:
        return dict(parse_qsl(body.decode("ascii"), keep_blank_values=True, encoding="utf-8", errors="strict",
                              max_num_fields=FORM_FIELDS))
    except (UnicodeDecodeError, ValueError):
        raise HTTPException(422, "the form is not valid UTF-8 or has too many fields") from None


def local_path(target: str | None, default: str) -> str:
    """`target` when it is a path on this site (never another host: `//evil`, `/\\evil`, `https:`), else `default`."""
    if target and target.startswith("/") and not target.startswith(("//", "/\\")):
        return target
    return default


def see_other(url: str, *cookies: str) -> RedirectResponse:
    """303 to `url` (after a form post), setting each `Set-Cookie` header given."""
    response = RedirectResponse(url, status_code=303)
    for cookie in cookies:
        response.headers.append("set-cookie", cookie)
    return response


def refused_status(exc: Exception, status: int = 401) -> dict:
    """A refused sign-in's status and headers: 429 with Retry-After while backing off."""
    if isinstance(exc, SignInThrottled):
        return {"status": 429, "headers": {"Retry-After": str(exc.retry_after)}}
    return {"status": status, "headers": {}}
