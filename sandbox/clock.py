"""A run's time: the CPU-time limit that is the learner's, and the wall clock as a backstop that load cannot move.

The learner's code is measured in CPU time, its processes together (the run's cgroup counter, read by the trusted
side every `POLL_S`; where no cgroup watches a run, each process's RLIMIT_CPU): a loaded machine slows a run's wall
clock, never its CPU time. The wall clock ends a run in two cases only:

- **idle**: the run spent `Limits.idle_limit` (IDLE_FACTOR x its CPU limit) of wall time neither computing nor
  waiting in the CPU's run queue: a sleep, a blocking read, a process that never exits. The learner's TIME_LIMIT,
  worded as a wait. Time spent queued for a CPU (the machine's other work, the slot's CPU quota) is not idle, so a
  run that the load slows keeps going until its CPU limit or its end. Where the other side says when the run owes
  it an answer (`Inbox.owes`: a runner, loading or asked) and both its CPU and its waits are measured, the idle time
  while owing has a limit of its own, `Limits.owed_idle_limit` (OWED_IDLE_FACTOR x its CPU limit): a runner's wait
  for the verifier's next request is the judge's time, a sleep while it is asked is the learner's;
- **wall**: `Limits.wall_limit` (WALL_FACTOR x its CPU limit) of wall time, whatever it did. Only a machine too
  loaded to give the run its CPU time gets there (`starved`): the grader's own failure, never the learner's verdict.

Run-queue waits come from the kernel's per-thread scheduler statistics (/proc/<tid>/schedstat), sampled at every
poll so that threads that end count too. A backend that cannot see its run's threads (or its CPU time, live)
counts that time as idle: its backstop is the plain wall clock at `idle_limit`, and always reads as a wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from sandbox.base import RunOutcome
from sandbox.limits import Limits

POLL_S = 0.25  # how often the trusted side reads a run's CPU counter and its threads' waits


def run_delay(tid: int) -> float:
    """Seconds thread `tid` has spent runnable but waiting for a CPU (0 where it is gone or unreadable)."""
    try:
        with open(f"/proc/{tid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


class QueueWaits:
    """Run-queue waits of a run's threads, summed over every thread ever sampled (each at its last sample)."""

    def __init__(self):
        self._seen: dict[int, float] = {}

    def sample(self, tids: Iterable[int]) -> float:
        for tid in tids:
            self._seen[tid] = max(self._seen.get(tid, 0.0), run_delay(tid))
        return sum(self._seen.values())


class Clock:
    """The limits of one run in time, checked by the trusted side while it reads the run's streams.

    `cpu()`: the run's CPU seconds so far (None: only the processes' RLIMIT_CPU counts); `waiting()`: its threads'
    run-queue waits so far (None, or a `waiting` that answers None: not measurable here)."""

    def __init__(self, limits: Limits, started: float, cpu: Callable[[], float] | None = None,
                 waiting: Callable[[], float | None] | None = None, owes: Callable[[], bool] | None = None):
        self.limits, self.started = limits, started
        self.deadline = started + limits.wall_limit
        self._cpu, self._waiting = cpu, waiting
        self._owes = owes if cpu is not None else None  # without the CPU counted, all of its time reads as idle
        self.ended: str | None = None  # "cpu", "idle" or "wall" once a limit is reached
        self.idle_limit_s: float | None = None  # the idle limit reached, once one is
        self.waited_s: float | None = None
        self.owed_idle_s = 0.0  # idle time while it owed an answer, summed over the checks' intervals
        self._last: tuple[float, bool] | None = None  # (idle so far, whether it owed) at the last check

    def timeout(self) -> float:
        """Seconds until the next check is due."""
        return max(0.0, min(POLL_S, self.deadline - time.monotonic()))

    def idle_s(self, cpu: float, now: float) -> float:
        """Wall time so far that the run spent neither computing nor waiting for a CPU (as far as is seen)."""
        return now - self.started - cpu - (self.waited_s or 0.0)

    def expired(self) -> bool:
        """Whether a limit is reached now (which, in `ended`); call it at least every `timeout()` while the run
        lives."""
        if self.ended is not None:
            return True
        self.waited_s = self._waiting() if self._waiting is not None else None
        cpu = self._cpu() if self._cpu is not None else 0.0
        now = time.monotonic()
        idle = self.idle_s(cpu, now)
        self._count_owed(idle)
        if cpu >= self.limits.cpu_limit:
            self.ended = "cpu"
        elif idle >= self.limits.idle_limit:
            self.ended, self.idle_limit_s = "idle", self.limits.idle_limit
        elif self.owed_idle_s >= self.limits.owed_idle_limit:
            self.ended, self.idle_limit_s = "idle", self.limits.owed_idle_limit
        elif now >= self.deadline:
            self.ended = "wall"
        return self.ended is not None

    def _count_owed(self, idle: float) -> None:
        """Add the idle time since the last check to `owed_idle_s` where the run owed an answer both then and now
        (an interval in which it answered may hold the judge's time too), and only while its waits are measured (an
        unmeasured wait would read as idle)."""
        if self._owes is None or self.waited_s is None:
            self._last = None
            return
        owes = self._owes()
        if self._last is not None and owes and self._last[1]:
            self.owed_idle_s += max(0.0, idle - self._last[0])
        self._last = (idle, owes)

    def mark(self, outcome: RunOutcome) -> None:
        """Say in `outcome` which limit ended the run, if one did."""
        outcome.cpu_exceeded = outcome.cpu_exceeded or self.ended == "cpu"
        outcome.timed_out = outcome.timed_out or self.ended in ("idle", "wall")
        outcome.starved = outcome.starved or self.ended == "wall"
        if self.idle_limit_s is not None:
            outcome.idle_limit_s = self.idle_limit_s
        if self.waited_s is not None:
            outcome.waiting_s = round(self.waited_s, 3)
