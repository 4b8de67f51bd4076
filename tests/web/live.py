"""The app served for real: uvicorn in a thread with the options `practice serve` gives it (web/server.py)."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn

from web.server import server_options
from web.settings import Settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """`with LiveServer(app) as server:` serves `app` on `server.url` until the block ends, with the options
    `practice serve` derives from `settings` (default: the app's own)."""

    def __init__(self, app, settings: Settings | None = None, **overrides):
        settings = settings if settings is not None else app.state.settings  # the app's own, by default
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        options = {**server_options(settings), "host": "127.0.0.1", "port": self.port, "log_level": "warning",
                   **overrides}
        self.server = uvicorn.Server(uvicorn.Config(app, **options))
        self.thread = threading.Thread(target=self.server.run, name="live-server", daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(15)

    def raw(self, timeout: float = 15.0) -> socket.socket:
        """A plain TCP connection to the server (for clients that misbehave on purpose)."""
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (socket.timeout if it never does)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)
