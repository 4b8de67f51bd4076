"""Which `Host` headers the server answers, and the absolute links it builds.

DNS rebinding: a page on `evil.example` re-resolves its own name to 127.0.0.1 and then talks to a learner's local
server as a same-origin page would; its requests carry `Host: evil.example`. So the server answers only the names it
is known by (`allowed`: localhost names, IP literals, the host of `base_url`, `allowed_hosts`) and refuses any
other Host with 400, and absolute links come from `base_url` when it is set (else from the allowed request host).
"""

from __future__ import annotations

import ipaddress
import json

from starlette.requests import Request

from web.settings import Settings

LOCAL_NAMES = ("localhost", "localhost.localdomain")  # IP literals (127.0.0.1, ::1) are answered as any IP is


def allowed(settings: Settings) -> tuple[str, ...]:
    """The host names answered (lower case; `*.domain` patterns and `*` as configured), IP literals aside."""
    from urllib.parse import urlsplit

    names = [*LOCAL_NAMES, *(h.strip().lower() for h in settings.allowed_hosts if h.strip())]
    if settings.base_url:
        names.append((urlsplit(settings.base_url).hostname or "").lower())
    return tuple(dict.fromkeys(n for n in names if n))


def host_name(header: str) -> str:
    """The name of a Host header without its port: `[::1]:8000` -> `::1`, `Example.org:80` -> `example.org`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def is_allowed(name: str, names: tuple[str, ...]) -> bool:
    if "*" in names or name in names:
        return True
    try:
        ipaddress.ip_address(name)
        return True  # a rebinding page always sends its own name, never an address
    except ValueError:
        pass
    return any(n.startswith("*.") and name.endswith(n[1:]) for n in names)


class HostAllowlist:
    """ASGI middleware: 400 for a request whose Host names this server by a name it is not configured with."""

    def __init__(self, app, names: tuple[str, ...]):
        self.app, self.names = app, names

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
            name = host_name(header)
            if name and not is_allowed(name, self.names):
                return await _refuse(send, name, self.names)
        return await self.app(scope, receive, send)


async def _refuse(send, name: str, names: tuple[str, ...]) -> None:
    detail = (f"this server does not answer for host {name!r} (it answers {', '.join(names)} and IP addresses): "
              "open it by one of those names, or add the name to PRACTICE_ALLOWED_HOSTS or PRACTICE_BASE_URL")
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def site_url(request: Request) -> str:
    """The server's address for absolute links: `base_url`, else the request's (allowed) scheme, host and root."""
    base = request.app.state.settings.base_url
    return (base or str(request.base_url)).rstrip("/")


def site_link(request: Request, name: str, **params: str) -> str:
    """The absolute URL of the route `name`, on `site_url`."""
    return site_url(request) + request.app.url_path_for(name, **params)
