"""A run's time: the CPU-time limit that is the learner's, the wall-clock backstop, and what the backstop means.

The learner's code is measured in CPU time, its processes together (the run's cgroup counter, read by the trusted
side every `POLL_S`; where no cgroup watches a run, each process's RLIMIT_CPU): a loaded machine slows a run's wall
clock, never its CPU time. The wall clock (`Limits.wall_limit`, WALL_FACTOR x the CPU limit) only ends a run that
stopped computing. When it does, the run is asked how it spent that time:

- it computed, or its threads waited in the CPU's run queue (the machine's other work, the slot's CPU quota), for
  at least `BUSY_FRACTION` of it: the judge starved it (`starved`: the grader's own failure, never the learner's
  verdict);
- else it waited on nothing the judge owes it (a sleep, a blocking read): the learner's TIME_LIMIT, worded as a
  wait.

Run-queue waits come from the kernel's per-thread scheduler statistics (/proc/<tid>/schedstat), sampled at every
poll so that threads that end are counted too; a backend that cannot see its run's threads reports none, and its
backstop always means a wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from sandbox.base import RunOutcome
from sandbox.limits import Limits

POLL_S = 0.25  # how often the trusted side reads a run's CPU counter and its threads' waits
BUSY_FRACTION = 0.5  # computing or waiting for a CPU this share of the wall time: the run was busy, not idle


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
                 waiting: Callable[[], float | None] | None = None):
        self.limits, self.started = limits, started
        self.deadline = started + limits.wall_limit
        self._cpu, self._waiting = cpu, waiting
        self.ended: str | None = None  # "cpu" or "wall" once a limit is reached
        self.starved = False
        self.waited_s: float | None = None

    def timeout(self) -> float:
        """Seconds until the next check is due."""
        return max(0.0, min(POLL_S, self.deadline - time.monotonic()))

    def expired(self) -> bool:
        """Whether a limit is reached now (which, in `ended`); call it at least every `timeout()` while the run
        lives."""
        if self.ended is not None:
            return True
        self.waited_s = self._waiting() if self._waiting is not None else None
        cpu = self._cpu() if self._cpu is not None else 0.0
        if cpu >= self.limits.cpu_limit:
            self.ended = "cpu"
        elif time.monotonic() >= self.deadline:
            self.ended = "wall"
            self.starved = busy(cpu, self.waited_s or 0.0, time.monotonic() - self.started)
        return self.ended is not None

    def mark(self, outcome: RunOutcome) -> None:
        """Say in `outcome` which limit ended the run, if one did."""
        outcome.cpu_exceeded = outcome.cpu_exceeded or self.ended == "cpu"
        outcome.timed_out = outcome.timed_out or self.ended == "wall"
        outcome.starved = outcome.starved or self.starved
        if self.waited_s is not None:
            outcome.waiting_s = round(self.waited_s, 3)


def busy(cpu_s: float, waiting_s: float, wall_s: float) -> bool:
    """Whether a run computed or waited for a CPU for most of `wall_s` (it was starved, not idle)."""
    return wall_s > 0 and cpu_s + waiting_s >= BUSY_FRACTION * wall_s
