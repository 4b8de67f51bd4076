"""The control channel between the trusted side and a warm worker: length-prefixed JSON over a
Unix socket, with file descriptors passed alongside (SCM_RIGHTS).

Only the trusted side and the worker hold the socket; the worker closes its end in every
submission's child before any learner code runs.
"""

from __future__ import annotations

import json
import socket
import struct

MAX_BYTES = 64 * 1024 * 1024
MAX_FDS = 8


class ChannelClosed(Exception):
    """The other end went away (or sent something that is not a message)."""


def send(sock: socket.socket, obj: dict, fds: list[int] | tuple[int, ...] = ()) -> None:
    """Send one message; `fds` travel with its first byte."""
    body = json.dumps(obj).encode()
    header = struct.pack("!I", len(body))
    try:
        if fds:
            socket.send_fds(sock, [header], list(fds))
        else:
            sock.sendall(header)
        sock.sendall(body)
    except OSError as exc:
        raise ChannelClosed(str(exc)) from None


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise ChannelClosed("end of channel")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv(sock: socket.socket, limit: int = MAX_BYTES) -> tuple[dict, list[int]]:
    """Receive one message and the descriptors sent with it."""
    try:
        header, fds, _, _ = socket.recv_fds(sock, 4, MAX_FDS)
        if not header:
            raise ChannelClosed("end of channel")
        if len(header) < 4:
            header += _exactly(sock, 4 - len(header))
        (size,) = struct.unpack("!I", header)
        if size > limit:
            raise ChannelClosed(f"message of {size} bytes is over the limit")
        obj = json.loads(_exactly(sock, size))
    except TimeoutError:
        raise
    except (OSError, ValueError) as exc:
        raise ChannelClosed(str(exc)) from None
    if not isinstance(obj, dict):
        raise ChannelClosed("message is not an object")
    return obj, fds
