"""Who may queue a submission now. Each bound refuses with 429, a message that says what to wait for, and
`Retry-After`:

- per learner: one submission grading at a time, and `submissions_per_minute` a minute (counted in the database);
- per client address: `submissions_per_minute_per_address` a minute, whatever learners it claims to be (a cookie
  costs nothing, so learners alone bound nothing); counted in this web process; an IPv6 address counts as its /64
  (one subscriber's network: a host can take any address of it);
- the whole queue: `max_queued_submissions` waiting for a grader.

The checks and the store happen under one lock, so two requests of one learner cannot both pass the one-at-a-time
check (the routes run in worker threads).
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from fastapi import HTTPException

from web.settings import Settings
from web.store import QUEUED, Store, Submission

RATE_WINDOW = timedelta(minutes=1)
BUSY_RETRY_AFTER = 5  # seconds: a submission of the same learner is grading
QUEUE_FULL_RETRY_AFTER = 30  # seconds: the queue is full
MAX_TRACKED_ADDRESSES = 10_000  # past it, addresses with no submission in the window are forgotten


def refuse_over_rate(recent: list[datetime], per_minute: int, what: str) -> None:
    """429 with Retry-After when `recent` (start times within RATE_WINDOW, oldest first) reach `per_minute`."""
    if len(recent) >= per_minute:
        wait = recent[-per_minute] + RATE_WINDOW - datetime.now(timezone.utc)
        seconds = max(1, math.ceil(wait.total_seconds()))
        raise HTTPException(429, f"at most {per_minute} {what} a minute; try again in {seconds} s",
                            headers={"Retry-After": str(seconds)})


def address_key(address: str) -> str:
    """The unit an address is counted in: an IPv4 address itself, an IPv6 address's /64 network."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address  # not an address (a test client's name)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip.ipv4_mapped or ip) if isinstance(ip, ipaddress.IPv6Address) else str(ip)


class Admission:
    """The bounds above, for one app (its settings and store)."""

    def __init__(self, settings: Settings, store: Store):
        self._settings, self._store = settings, store
        self._lock = threading.Lock()
        self._by_address: dict[str, deque[float]] = {}

    def admit(self, learner_id: str, address: str, add: Callable[[], Submission]) -> Submission:
        """`add()` (store and queue the submission) unless a bound refuses it (HTTPException 429); `address` is an
        `address_key`."""
        settings = self._settings
        with self._lock:
            if self._store.active(learner_id) is not None:
                raise HTTPException(429, "a submission of yours is still being graded; wait for its verdict",
                                    headers={"Retry-After": str(BUSY_RETRY_AFTER)})
            refuse_over_rate(self._store.recent(learner_id, RATE_WINDOW), settings.submissions_per_minute,
                             "submissions")
            times = self._window(address)
            limit = settings.submissions_per_minute_per_address
            if len(times) >= limit:
                seconds = max(1, math.ceil(times[-limit] + RATE_WINDOW.total_seconds() - time.monotonic()))
                raise HTTPException(429, f"at most {limit} submissions a minute from one address ({address}); "
                                         f"try again in {seconds} s", headers={"Retry-After": str(seconds)})
            waiting = self._store.count(QUEUED)
            if waiting >= settings.max_queued_submissions:
                raise HTTPException(429, f"the grading queue is full ({waiting} submissions waiting); try again in "
                                         f"{QUEUE_FULL_RETRY_AFTER} s",
                                    headers={"Retry-After": str(QUEUE_FULL_RETRY_AFTER)})
            submission = add()
            times.append(time.monotonic())
            return submission

    def _window(self, address: str) -> deque[float]:
        """The address's submission times within the window (older ones dropped)."""
        now = time.monotonic()
        if len(self._by_address) > MAX_TRACKED_ADDRESSES:
            for key in [k for k, t in self._by_address.items() if not t or t[-1] < now - RATE_WINDOW.total_seconds()]:
                del self._by_address[key]
        times = self._by_address.setdefault(address, deque())
        while times and times[0] < now - RATE_WINDOW.total_seconds():
            times.popleft()
        return times
