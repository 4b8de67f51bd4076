"""Slow work off the event loop: the server has one loop, and a route that blocks it stalls every other request.

`in_thread` runs a blocking call (database, template, file, grading queue) in the worker threads; `hashing` runs a
call that computes Argon2 (sign-in, join, password change) there too, but first waits, as a coroutine that holds no
thread, for one of the `password_hashes_at_once` slots (`Settings`), so a flood of sign-ins queues cheaply and
leaves the threads to everything else.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from starlette.requests import Request

T = TypeVar("T")


async def in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker thread."""
    return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs))


async def hashing(request: Request, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)`, a call that hashes or verifies a password, in a thread once a hashing slot is free."""
    return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs), limiter=hash_slots(request.app))


def hash_slots(app) -> anyio.CapacityLimiter:
    """The app's limiter of concurrent hashes (made on first use: a limiter belongs to the running loop)."""
    slots = getattr(app.state, "hash_slots", None)
    if slots is None:
        slots = app.state.hash_slots = anyio.CapacityLimiter(app.state.settings.password_hashes_at_once)
    return slots
