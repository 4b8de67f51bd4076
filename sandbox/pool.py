"""A warm pool: one worker per slot, started ahead of demand and replaced in the background.

A worker that broke or served `max_runs` jobs is retired on release and its slot refilled, so a
submission waits only for its own grading (and for a free slot when all are busy).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from sandbox.base import SandboxError

RETRY_AFTER_S = 5.0
log = logging.getLogger(__name__)


class Worker(Protocol):
    """What a pool needs of a worker (`sandbox.warm.Worker` is one)."""

    pool_slot: int
    broken: bool
    runs: int

    def start(self) -> None: ...

    def close(self) -> None: ...


W = TypeVar("W", bound=Worker)


class Pool(Generic[W]):
    """Slots 0..size-1, each holding at most one worker (`sandbox.warm.Worker`)."""

    def __init__(self, make_worker: Callable[[int], W], size: int, max_runs: int):
        self._make = make_worker
        self.size = max(1, size)
        self.max_runs = max_runs
        self._cond = threading.Condition()
        self._idle: list = []
        self._starting: set[int] = set()
        self._errors: dict[int, tuple[float, str]] = {}
        self._all: set = set()
        self._refs = 1
        self._closed = False
        for slot in range(self.size):
            self._start(slot)

    def _start(self, slot: int) -> None:
        self._starting.add(slot)
        threading.Thread(target=self._fill, args=(slot,), name=f"sandbox-slot-{slot}", daemon=True).start()

    def _fill(self, slot: int) -> None:
        worker, error = None, None
        try:
            worker = self._make(slot)
            worker.pool_slot = slot  # this pool's numbering (a worker's own `slot` may be offset by its maker)
            worker.start()
        except Exception as exc:  # noqa: BLE001 - reported to whoever waits for a worker
            worker, error = None, str(exc) or type(exc).__name__
        with self._cond:
            self._starting.discard(slot)
            if worker is not None and self._closed:
                threading.Thread(target=worker.close, daemon=True).start()
            elif worker is not None:
                self._errors.pop(slot, None)
                self._idle.append(worker)
                self._all.add(worker)
            else:
                self._errors[slot] = (time.monotonic(), error)
            self._cond.notify_all()

    def acquire(self, timeout: float) -> W:
        """An idle warm worker; SandboxError if none can be started or none frees up in `timeout`."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if self._closed:
                    raise SandboxError("the sandbox pool is closed")
                if self._idle:
                    return self._idle.pop(0)
                for slot, (when, _) in list(self._errors.items()):
                    if time.monotonic() - when > RETRY_AFTER_S and slot not in self._starting:
                        self._errors.pop(slot)
                        self._start(slot)
                if len(self._errors) == self.size and not self._starting:
                    raise SandboxError(f"no sandbox worker could start: {next(iter(self._errors.values()))[1]}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SandboxError(f"no sandbox worker became free within {timeout:g} s")
                self._cond.wait(min(left, 1.0))

    def release(self, worker) -> None:
        """Give a worker back; a broken or worn-out one is closed and its slot refilled."""
        retire = worker.broken or worker.runs >= self.max_runs
        if retire:
            log.info("retiring sandbox worker in slot %d after %d runs%s", worker.pool_slot, worker.runs,
                     " (broken)" if worker.broken else "")
        with self._cond:
            if not retire and not self._closed:
                self._idle.append(worker)
                self._cond.notify_all()
                return
            self._all.discard(worker)
            if not self._closed:
                self._start(worker.pool_slot)
        threading.Thread(target=worker.close, daemon=True).start()

    def settle(self, timeout: float) -> None:
        """Wait until no slot is starting a worker (for tests that look at every worker process)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._starting and time.monotonic() < deadline:
                self._cond.wait(min(1.0, max(0.01, deadline - time.monotonic())))

    def workers(self) -> list:
        """Every live worker, idle or busy (for diagnostics and tests)."""
        with self._cond:
            return list(self._all)

    def ref(self) -> None:
        with self._cond:
            self._refs += 1

    def unref(self) -> None:
        with self._cond:
            self._refs -= 1
            last = self._refs <= 0
        if last:
            self.shutdown()

    def shutdown(self) -> None:
        """Close every idle and busy worker (a busy one's run ends as the worker goes)."""
        with self._cond:
            self._closed = True
            workers, self._idle = list(self._all), []
            self._all.clear()
            self._cond.notify_all()
        for worker in workers:
            try:
                worker.close()
            except Exception:  # noqa: BLE001 - best effort at shutdown
                pass
        with _lock:
            for key, pool in list(_pools.items()):
                if pool is self:
                    del _pools[key]


_lock = threading.Lock()
_pools: dict[tuple, Pool] = {}


def shared_pool(key: tuple, make: Callable[[], Pool[W]]) -> Pool[W]:
    """The pool for `key`, made on first use; every user calls `unref()` when done."""
    with _lock:
        pool = _pools.get(key)
        if pool is not None and not pool._closed:
            pool.ref()
            return pool
        pool = _pools[key] = make()
        return pool


@atexit.register
def _shutdown_all() -> None:
    with _lock:
        pools = list(_pools.values())
    for pool in pools:
        pool.shutdown()
