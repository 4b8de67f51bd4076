"""Read a sandboxed run's stdout, stderr and result channel together, with a deadline and an output cap.

Shared by every backend: it fills a RunOutcome (truncated output, parsed messages, limit flags) and
calls `kill()` as soon as a limit is hit (the output cap here, time limits by the run's `sandbox.clock.Clock`).
"""

from __future__ import annotations

import os
import selectors
import time
from collections.abc import Callable

from sandbox.base import MessageParser, OnMessage, RunOutcome
from sandbox.clock import Clock

CHUNK = 65536


def pump(*, stdout_fd: int, stderr_fd: int, result_fd: int, clock: Clock, output_cap: int,
         outcome: RunOutcome, on_message: OnMessage | None, kill: Callable[[], None]) -> None:
    """Read until every stream is closed or a limit is hit (then `kill()` and drain what is left)."""
    parser = MessageParser(outcome, on_message)
    names = {stdout_fd: "stdout", stderr_fd: "stderr", result_fd: "result"}
    kept = {"stdout": bytearray(), "stderr": bytearray()}
    used = 0
    selector = selectors.DefaultSelector()
    for fd in names:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    killed = False
    drain_end = None
    while selector.get_map():
        if not killed and clock.expired():
            clock.mark(outcome)
            killed = True
            kill()
            drain_end = time.monotonic() + 5  # drain briefly after the kill
        if drain_end is not None and time.monotonic() >= drain_end:
            break
        wait = clock.timeout() if drain_end is None else min(0.5, drain_end - time.monotonic())
        for key, _ in selector.select(timeout=max(0.0, wait)):
            fd = key.fd
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                selector.unregister(fd)
                continue
            if names[fd] == "result":
                parser.feed(data)
                continue
            room = max(0, output_cap - used)
            kept[names[fd]] += data[:room]
            used += len(data)
            if used > output_cap and not killed:
                outcome.output_exceeded, killed = True, True
                kill()
                drain_end = time.monotonic() + 5
    selector.close()
    parser.close()
    outcome.stdout = kept["stdout"].decode("utf-8", "replace")
    outcome.stderr = kept["stderr"].decode("utf-8", "replace")
