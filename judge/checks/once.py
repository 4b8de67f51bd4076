"""Work that several checks of one grading read (a real Inductor compile, a run of replays): done once, shared."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

R = TypeVar("R")


def once(memo: dict, make: Callable[[], R]) -> R:
    """`make()` the first time a check asks, kept in `memo` (a dict of the test module's: one grading loads the
    module once). Every later check gets the same result, or the exception `make` raised, raised again, so that
    each check that needs it fails as the first one did."""
    if "result" not in memo:
        try:
            memo["result"] = make()
        except Exception as exc:  # noqa: BLE001 - raised again by every check that asks
            memo["result"] = exc
    if isinstance(memo["result"], Exception):
        raise memo["result"]
    return memo["result"]
