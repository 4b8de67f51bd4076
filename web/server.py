"""How the web app is served: uvicorn's options from the settings, a read deadline per request, a clean access log.

- uvicorn bounds idle keep-alive connections (`keep_alive_seconds`) and connections and requests served at once
  (`max_connections`: past it, 503), but it has no deadline for reading a request (a client that sends its headers
  or body a byte at a time holds its connection forever), and h11 bounds a request's head only while it is
  incomplete. `ReadDeadline`, uvicorn's h11 protocol plus two timers, gives the headers `header_seconds` (from the
  connection's start or the previous response) and the body `body_seconds` (after the headers), past either 408;
  and it answers 431 to a head over `max_header_bytes` however it arrives; the connection is then closed.
- The access log names each request's path; a sign-in link's path is a credential (`/signin/link/TOKEN`), so
  `RedactSecrets` writes it as `/signin/link/<redacted>` (and any `token` query value likewise).
- A load balancer or a container runtime polls `/healthz` every few seconds: `QuietHealthz` leaves its answered
  polls out of the access log (a failing one, status 400 or more, is still logged).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from typing import Any

import h11
from uvicorn.config import LOGGING_CONFIG
from uvicorn.protocols.http.h11_impl import H11Protocol

from web.settings import Settings

REDACTED = "<redacted>"
SECRET_PATHS = re.compile(r"(/signin/link/)[^/?#\s]+")
SECRET_QUERY = re.compile(r"([?&](?:token|id_token)=)[^&#\s]*")
TIMEOUT_BODY = b"the request was not received in time: send the headers and body without pausing\n"
LINGER_S = 2.0  # how long a refused connection is still read from before it is closed (see ReadDeadline._refuse)
HEAD_TOO_LARGE = b"the request's line and headers are too large: send fewer or shorter headers\n"


def redact(path: str) -> str:
    """`path` with the credentials it may hold replaced."""
    return SECRET_QUERY.sub(r"\1" + REDACTED, SECRET_PATHS.sub(r"\1" + REDACTED, path))


class RedactSecrets(logging.Filter):
    """On uvicorn's access logger: its record's arguments are (client, method, path, http version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact(args[2]), *args[3:])
        return True


class QuietHealthz(logging.Filter):
    """On uvicorn's access logger: drops the lines of `/healthz` polls that were answered (status below 400)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 5 and isinstance(args[2], str):
            path = args[2].split("?", 1)[0]
            return not (path == "/healthz" and isinstance(args[4], int) and args[4] < 400)
        return True


def log_config() -> dict:
    """uvicorn's logging configuration with `QuietHealthz` and `RedactSecrets` on the access logger."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_secrets"] = {"()": RedactSecrets}
    config["filters"]["quiet_healthz"] = {"()": QuietHealthz}
    config["loggers"]["uvicorn.access"]["filters"] = ["quiet_healthz", "redact_secrets"]
    return config


class ReadDeadline(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's headers and one for its body, and a limit on the
    size of a request's head however it arrives (h11's own limit holds only while the head is incomplete, so a
    head that came in one read was taken whatever its size)."""

    header_seconds = 10.0
    body_seconds = 60.0
    max_head_bytes = 16 * 1024

    def data_received(self, data: bytes) -> None:
        if self._refused:  # answered and closing: what the client still sends is read and dropped
            return
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():  # reading a request's head
            buffered = self.conn.trailing_data[0] + data
            end = buffered.find(b"\r\n\r\n")
            if (end if end >= 0 else len(buffered)) > self.max_head_bytes:
                self._refuse(431, HEAD_TOO_LARGE)
                return
        super().data_received(data)

    def connection_made(self, transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._reading_body = False
        self._refused = False
        super().connection_made(transport)
        self._arm(self.header_seconds)

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def handle_events(self) -> None:
        super().handle_events()
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if not self._reading_body:  # the headers are in: the body's deadline starts
                self._reading_body = True
                self._arm(self.body_seconds)
        elif state is not h11.IDLE:  # the whole request is in (or the connection is over)
            self._reading_body = False
            self._disarm()

    def on_response_complete(self) -> None:
        self._reading_body = False
        self._arm(self.header_seconds)  # the next request's headers (the keep-alive timer closes an idle one)
        super().on_response_complete()  # a pipelined request already in disarms it again

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        started = self.cycle is not None and not self.cycle.response_complete and self.cycle.response_started
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the app reading the body is told the client went away
            self.cycle.message_event.set()
        if not started:
            self._refuse(408, TIMEOUT_BODY)
        else:
            self.transport.close()

    def _refuse(self, status: int, body: bytes) -> None:
        """Answer `status` with `body` (text), then close the connection: at once from our side, and after
        `LINGER_S` entirely, reading and dropping what the client still sends meanwhile. Closing a socket with unread
        data in it resets the connection, and a client still sending (a large head in pieces) would then get the
        reset instead of the answer."""
        reason = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}[status]
        self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
                             b"content-length: %d\r\n\r\n%s" % (status, reason, len(body), body))
        self._refused = True
        self._disarm()
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)


def protocol(settings: Settings) -> type[ReadDeadline]:
    """`ReadDeadline` with the settings' deadlines."""
    return type("ReadDeadline", (ReadDeadline,), {"header_seconds": settings.header_seconds,
                                                  "body_seconds": settings.body_seconds,
                                                  "max_head_bytes": settings.max_header_bytes})


def server_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments of `uvicorn.run` / `uvicorn.Config` for the app under these settings."""
    return {"host": settings.host, "port": settings.port, "http": protocol(settings),
            "timeout_keep_alive": settings.keep_alive_seconds, "limit_concurrency": settings.max_connections,
            "h11_max_incomplete_event_size": settings.max_header_bytes, "log_config": log_config(),
            "log_level": "info", "timeout_graceful_shutdown": 5}
