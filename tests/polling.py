"""Waiting in tests for what another thread or process does, where no event can be awaited."""

from __future__ import annotations

import time


def wait_until(predicate, timeout: float = 20.0, what: str = "condition", interval: float = 0.05):
    """Poll `predicate()` every `interval` seconds until it is truthy and return its value; an AssertionError naming
    `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(interval)
