"""Start sandbox processes from one long-lived thread.

`bwrap --die-with-parent` (PR_SET_PDEATHSIG) fires when the *thread* that forked it exits, so
workers must not be started from the short-lived threads that fill the pool.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")
_requests: queue.Queue[tuple[Callable, Future]] = queue.Queue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


def _serve() -> None:
    while True:
        fn, future = _requests.get()
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)


def call(fn: Callable[[], T]) -> T:
    """Run `fn` on the launcher thread (started on first use) and return its result."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_serve, name="sandbox-launcher", daemon=True)
            _thread.start()
    if threading.current_thread() is _thread:
        return fn()
    future: Future = Future()
    _requests.put((fn, future))
    return future.result()
