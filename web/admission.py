"""The one way in for anything that runs learner code: a grading (queued), a playground run and an on-demand cost
measurement (run in this web process). Each bound refuses with 429, a message that says what to wait for, and
`Retry-After`:

- per learner: one grading (and one run of each kind) at a time, and `submissions_per_minute` of each a minute
  (gradings counted in the database, runs in this process);
- per client address: `submissions_per_minute_per_address` of all of them together a minute, whatever learners it
  claims to be (a cookie costs nothing, so learners alone bound nothing); counted in this web process; an IPv6
  address counts as its /64 (one subscriber's network: a host can take any address of it);
- what waits: `max_queued_submissions` in all (gradings waiting for a grader and runs waiting for a slot), of which
  one client address may hold `queued_per_address_limit()` (a quarter by default), so one address cannot keep
  everyone else at "queue full".

A run waits for one of `workers` slots as a coroutine (`Admission.run`): waiting holds no thread of the server, slots
are given round-robin between client addresses, and a run whose client has gone before its slot comes is dropped.
The checks and the store of a grading happen under one lock, so two requests of one learner cannot both pass the
one-at-a-time check (the routes call `admit` in worker threads).
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Protocol, TypeVar

from fastapi import HTTPException

from web import gpu_budget
from web.settings import Settings
from web.store import QUEUED, Submission

T = TypeVar("T")
RATE_WINDOW = timedelta(minutes=1)
BUSY_RETRY_AFTER = 5  # seconds: a submission of the same learner is grading
QUEUE_FULL_RETRY_AFTER = 30  # seconds: the queue is full
MAX_TRACKED_ADDRESSES = 10_000  # past it, addresses with no submission in the window are forgotten
# A run's kind in a refusal.
RUN_WORDS = {"playground": "playground runs", "cost": "cost measurements", "questions": "question runs"}


class Submissions(Protocol):
    """What admission reads of the store (web.store.Store)."""

    def active(self, learner_id: str) -> Submission | None: ...
    def graded_seconds(self, learner_id: str, exercise_ids: Collection[str],
                       window: timedelta) -> list[tuple[datetime, float]]: ...
    def recent(self, learner_id: str, window: timedelta) -> list[datetime]: ...
    def count(self, status: str | None = None) -> int: ...
    def still_queued(self, ids: Collection[str]) -> set[str]: ...


def refuse_over_rate(recent: list[datetime], per_minute: int, what: str) -> None:
    """429 with Retry-After when `recent` (start times within RATE_WINDOW, oldest first) reach `per_minute`."""
    if len(recent) >= per_minute:
        wait = recent[-per_minute] + RATE_WINDOW - datetime.now(timezone.utc)
        seconds = max(1, math.ceil(wait.total_seconds()))
        raise HTTPException(429, f"at most {per_minute} {what} a minute; try again in {seconds} s",
                            headers={"Retry-After": str(seconds)})


REFUSAL_HEADER = "X-Practice-Refusal"  # which bound refused, for the page's localized message (web/static/app.js)


def too_many(detail: str, retry_after: int, refusal: str | None = None) -> HTTPException:
    headers = {"Retry-After": str(retry_after), **({REFUSAL_HEADER: refusal} if refusal else {})}
    return HTTPException(429, detail, headers=headers)


def address_key(address: str) -> str:
    """The unit an address is counted in: an IPv4 address itself, an IPv6 address's /64 network."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address  # not an address (a test client's name)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip.ipv4_mapped or ip) if isinstance(ip, ipaddress.IPv6Address) else str(ip)


@dataclass(frozen=True)
class Ticket:
    """A run admitted and waiting for a slot (`Admission.reserve`); `Admission.run_ticket` runs it."""

    kind: str
    learner_id: str
    address: str


class ClientGone(Exception):
    """The run's client went away before a slot came: the run was dropped."""


class Admission:
    """The bounds above, for one app (its settings and store)."""

    def __init__(self, settings: Settings, store: Submissions):
        self._settings, self._store = settings, store
        self._lock = threading.Lock()
        self._by_address: dict[str, deque[float]] = {}
        self._queued: dict[str, list[str]] = {}  # address -> its gradings admitted here, perhaps still queued
        self._runs: dict[tuple[str, str], deque[float]] = {}  # (kind, learner) -> run start times in the window
        self._running: set[tuple[str, str]] = set()  # (kind, learner) admitted, not finished
        self._waiting: dict[str, int] = {}  # address -> runs waiting for a slot
        self._turns: OrderedDict[str, deque[asyncio.Future]] = OrderedDict()  # address -> its waiters, in turn
        self._free = max(1, settings.workers)
        self.dropped = 0  # runs dropped because their client had gone (for tests and logs)

    # -- gradings -------------------------------------------------------------------------------------------------

    def admit(self, learner_id: str, address: str, add: Callable[[], Submission],
              gpu_exercises: Collection[str] = ()) -> Submission:
        """`add()` (store and queue the submission) unless a bound refuses it (HTTPException 429); `address` is an
        `address_key`; `gpu_exercises`, for a submission to an exercise that needs CUDA: the course's exercises
        whose gradings count against the learner's GPU budget."""
        settings = self._settings
        with self._lock:
            if self._store.active(learner_id) is not None:
                raise too_many("a submission of yours is still being graded; wait for its verdict", BUSY_RETRY_AFTER)
            refuse_over_rate(self._store.recent(learner_id, RATE_WINDOW), settings.submissions_per_minute,
                             "submissions")
            if gpu_exercises and settings.gpu_seconds_per_hour > 0:
                spent = self._store.graded_seconds(learner_id, gpu_exercises, gpu_budget.WINDOW)
                wait = gpu_budget.seconds_until_allowed(spent, settings.gpu_seconds_per_hour)
                if wait:
                    raise too_many(gpu_budget.refusal(settings.gpu_seconds_per_hour, wait), wait, "gpu-budget")
            times = self._refuse_over_address_rate(address)
            self._refuse_when_full(address)
            submission = add()
            times.append(time.monotonic())
            self._queued.setdefault(address, []).append(submission.id)
            return submission

    # -- runs in this process -------------------------------------------------------------------------------------

    def reserve(self, kind: str, learner_id: str, address: str) -> Ticket:
        """Admit a run of `kind` (a key of RUN_WORDS) or refuse it (429); blocking (the store): call it in a
        thread. The ticket holds a waiting place until `run_ticket` runs it or gives it up."""
        key = (kind, learner_id)
        with self._lock:
            if key in self._running:
                raise too_many(f"a {kind} run of yours is still running; wait for it", BUSY_RETRY_AFTER)
            now = time.monotonic()
            mine = self._runs.setdefault(key, deque())
            while mine and mine[0] < now - RATE_WINDOW.total_seconds():
                mine.popleft()
            per_minute = self._settings.submissions_per_minute
            if len(mine) >= per_minute:
                seconds = max(1, math.ceil(mine[-per_minute] + RATE_WINDOW.total_seconds() - now))
                raise too_many(f"at most {per_minute} {RUN_WORDS[kind]} a minute; try again in {seconds} s", seconds)
            times = self._refuse_over_address_rate(address)
            self._refuse_when_full(address)
            times.append(now)
            mine.append(now)
            self._running.add(key)
            self._waiting[address] = self._waiting.get(address, 0) + 1
            if len(self._runs) > MAX_TRACKED_ADDRESSES:
                for old in [k for k, t in self._runs.items() if not t and k not in self._running]:
                    del self._runs[old]
        return Ticket(kind, learner_id, address)

    async def run_ticket(self, ticket: Ticket, fn: Callable[[], T], gone: asyncio.Future | None = None) -> T:
        """`fn()` in a thread once a slot is free (waiting as a coroutine: no thread is held); `gone`, when it
        completes first, drops the run (ClientGone)."""
        from web.offload import in_thread

        try:
            await self._slot(ticket.address, gone)
        except BaseException:
            self._finish(ticket, waited=True)
            raise
        self._leave_waiting(ticket.address)
        try:
            return await in_thread(fn)
        finally:
            self._finish(ticket, waited=False)
            self._release_slot()

    def waiting(self, address: str | None = None) -> int:
        """Runs waiting for a slot (from `address`, an `address_key`, when given)."""
        with self._lock:
            return self._waiting.get(address, 0) if address is not None else sum(self._waiting.values())

    def give_up(self, ticket: Ticket) -> None:
        """A reserved run that will not be run after all."""
        self._finish(ticket, waited=True)

    async def run(self, request, kind: str, learner_id: str, fn: Callable[[], T]) -> T:
        """A run for `request`'s client: admitted (`reserve`), then `run_ticket`, dropped if the client goes."""
        from web.offload import in_thread

        address = address_key(request.client.host) if request.client else ""
        ticket = await in_thread(self.reserve, kind, learner_id, address)
        watcher = asyncio.ensure_future(_disconnected(request))
        try:
            return await self.run_ticket(ticket, fn, watcher)
        except ClientGone:
            raise HTTPException(400, "the client went away before its run started") from None
        finally:
            watcher.cancel()

    async def _slot(self, address: str, gone: asyncio.Future | None) -> None:
        with self._lock:
            if self._free > 0 and not self._turns:
                self._free -= 1
                return
            waiter: asyncio.Future = asyncio.get_running_loop().create_future()
            self._turns.setdefault(address, deque()).append(waiter)
        try:
            if gone is None:
                await waiter
            else:
                await asyncio.wait([waiter, gone], return_when=asyncio.FIRST_COMPLETED)
                if not waiter.done():
                    raise ClientGone
            if gone is not None and gone.done():  # gone at the moment the slot came: give the slot on
                raise ClientGone
        except BaseException:
            with self._lock:
                if waiter.done() and not waiter.cancelled():
                    self._hand_on()  # the slot was ours: the next waiter's
                else:
                    waiter.cancel()
                    queue = self._turns.get(address)
                    if queue is not None and waiter in queue:
                        queue.remove(waiter)
                        if not queue:
                            del self._turns[address]
                self.dropped += 1
            raise

    def _release_slot(self) -> None:
        with self._lock:
            self._hand_on()

    def _hand_on(self) -> None:
        """A slot is free: the next address in turn gets it for its oldest waiter (the lock is held)."""
        while self._turns:
            address, waiters = next(iter(self._turns.items()))
            del self._turns[address]
            waiter = waiters.popleft()
            if waiters:
                self._turns[address] = waiters  # to the back of the addresses' turn
            if not waiter.done():  # on the loop, as every caller is: granted at once, never lost to a cancel
                waiter.set_result(None)
                return
        self._free += 1

    def _leave_waiting(self, address: str) -> None:
        with self._lock:
            self._waiting[address] -= 1
            if not self._waiting[address]:
                del self._waiting[address]

    def _finish(self, ticket: Ticket, *, waited: bool) -> None:
        if waited:
            self._leave_waiting(ticket.address)
        with self._lock:
            self._running.discard((ticket.kind, ticket.learner_id))

    # -- shared bounds (the lock is held) -------------------------------------------------------------------------

    def _refuse_over_address_rate(self, address: str) -> deque[float]:
        times = self._window(address)
        limit = self._settings.submissions_per_minute_per_address
        if len(times) >= limit:
            seconds = max(1, math.ceil(times[-limit] + RATE_WINDOW.total_seconds() - time.monotonic()))
            raise too_many(f"at most {limit} submissions and runs a minute from one address ({address}); try again "
                           f"in {seconds} s", seconds)
        return times

    def _refuse_when_full(self, address: str) -> None:
        waiting = self._store.count(QUEUED) + sum(self._waiting.values())
        if waiting >= self._settings.max_queued_submissions:
            raise too_many(f"the grading queue is full ({waiting} submissions waiting); try again in "
                           f"{QUEUE_FULL_RETRY_AFTER} s", QUEUE_FULL_RETRY_AFTER)
        share = self._settings.queued_per_address_limit()
        mine = self._waiting.get(address, 0) + self._queued_of(address)
        if mine >= share:
            raise too_many(f"{mine} submissions and runs from your address ({address}) are waiting already, the most "
                           f"one address may have waiting; try again in {QUEUE_FULL_RETRY_AFTER} s",
                           QUEUE_FULL_RETRY_AFTER)

    def _queued_of(self, address: str) -> int:
        """The address's gradings still waiting for a grader (those that left the queue are forgotten)."""
        ids = self._queued.get(address)
        if not ids:
            return 0
        still = self._store.still_queued(ids)
        ids[:] = [i for i in ids if i in still]
        if not ids:
            del self._queued[address]
        return len(ids)

    def _window(self, address: str) -> deque[float]:
        """The address's start times within the window (older ones dropped)."""
        now = time.monotonic()
        if len(self._by_address) > MAX_TRACKED_ADDRESSES:
            for key in [k for k, t in self._by_address.items() if not t or t[-1] < now - RATE_WINDOW.total_seconds()]:
                del self._by_address[key]
        times = self._by_address.setdefault(address, deque())
        while times and times[0] < now - RATE_WINDOW.total_seconds():
            times.popleft()
        return times


async def _disconnected(request) -> None:
    """Returns when the request's client has gone (its body was read already: the next message is the
    disconnect)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return
