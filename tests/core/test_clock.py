"""sandbox.clock: which limit ends a run, from its CPU time, its threads' waits for a CPU and the wall clock."""

from __future__ import annotations

import threading
import time

import pytest

from sandbox.base import RunOutcome
from sandbox.clock import Clock, QueueWaits, run_delay
from sandbox.limits import Limits

LIMITS = Limits(time_seconds=10)  # CPU 10 s; idle 30 s; wall 100 s


def ended(elapsed: float, cpu: float | None, waiting: float | None) -> RunOutcome:
    """The outcome of a run `elapsed` s old with these counters, checked once."""
    clock = Clock(LIMITS, time.monotonic() - elapsed, cpu=None if cpu is None else lambda: cpu,
                  waiting=None if waiting is None else lambda: waiting)
    outcome = RunOutcome()
    if clock.expired():
        clock.mark(outcome)
    return outcome


@pytest.mark.parametrize("elapsed, cpu, waiting, expected", [
    (5, 1.0, 0.5, set()),
    (12, 10.0, 0.0, {"cpu_exceeded"}),  # its CPU limit, however long it took
    (90, 10.0, 75.0, {"cpu_exceeded"}),  # ... a loaded machine's run too
    (31, 0.5, 0.2, {"timed_out"}),  # idle past 3 x the limit: a sleep, the learner's
    (60, 9.0, 45.0, set()),  # slowed by the load, not idle: it goes on
    (101, 9.0, 85.0, {"timed_out", "starved"}),  # the wall clock's last word: the load starved it
    (31, 0.0, None, {"timed_out"}),  # no CPU or waits seen (an unisolated backend): a wait at 3 x the limit
    (31, None, None, {"timed_out"}),
])
def test_the_limit_that_ends_a_run(elapsed, cpu, waiting, expected):
    outcome = ended(elapsed, cpu, waiting)
    flags = {name for name in ("cpu_exceeded", "timed_out", "starved") if getattr(outcome, name)}
    assert flags == expected


def test_waits_of_threads_no_longer_listed_still_count():
    waits = QueueWaits()
    here = threading.get_native_id()
    first = waits.sample([here])
    assert first == pytest.approx(run_delay(here), abs=0.05)
    assert waits.sample([]) == first  # a thread no longer listed (ended) keeps its last sample
    assert run_delay(2**22 + 7) == 0.0  # no such thread


class Ticks:
    """A monotonic clock the test moves by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("measured", [True, False])
def test_idle_while_owing_an_answer_has_its_own_limit_and_waiting_for_the_next_request_is_free(monkeypatch,
                                                                                             measured):
    ticks, owes = Ticks(), [True]
    monkeypatch.setattr("sandbox.clock.time.monotonic", ticks)
    clock = Clock(LIMITS, ticks(), cpu=lambda: 0.0, waiting=(lambda: 0.0) if measured else (lambda: None),
                  owes=lambda: owes[0])

    def after(seconds: float, owing: bool) -> bool:
        """Idle for `seconds` (checked every quarter second), owing an answer or waiting for a request."""
        owes[0] = owing
        for _ in range(int(seconds * 4)):
            ticks.now += 0.25
            if clock.expired():
                return True
        return False

    assert not after(6, owing=True)  # importing, then answering: 6 s idle of the 10 it may owe
    assert not after(15, owing=False)  # the verifier's turn: 15 s of the judge's time, not counted
    # the interval it answered in is not counted; nothing is where its waits are not seen
    assert clock.owed_idle_s == (pytest.approx(5.75, abs=0.3) if measured else 0)
    if measured:
        assert after(5, owing=True) and clock.ended == "idle" and clock.idle_limit_s == LIMITS.owed_idle_limit
        outcome = RunOutcome()
        clock.mark(outcome)
        assert outcome.timed_out and not outcome.starved and outcome.idle_limit_s == 10
    else:  # waits not seen: idle time cannot be told from a wait for a CPU; only the general idle limit holds
        assert not after(8, owing=True)
        assert after(2, owing=True) and clock.idle_limit_s == LIMITS.idle_limit


def test_without_a_cpu_count_owing_changes_nothing(monkeypatch):
    ticks = Ticks()
    monkeypatch.setattr("sandbox.clock.time.monotonic", ticks)
    clock = Clock(LIMITS, ticks(), cpu=None, waiting=None, owes=lambda: True)
    ticks.now += 29
    assert not clock.expired() and clock.owed_idle_s == 0
