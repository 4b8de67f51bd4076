"""Fair GPU use: each learner may spend `gpu_seconds_per_hour` of GPU grading (the durations of their graded
submissions to exercises that need CUDA, over the last hour); past it, a GPU submission is refused with the time
when the next one is possible (when enough of that hour's gradings have left the window)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

WINDOW = timedelta(hours=1)


def seconds_until_allowed(spent: list[tuple[datetime, float]], budget: float,
                          now: datetime | None = None) -> int:
    """0 when a learner whose GPU gradings of the window are `spent` ((finished at, seconds), oldest first) may
    start another; else the whole seconds until the oldest gradings leave the window enough to bring the sum under
    `budget`."""
    now = now or datetime.now(timezone.utc)
    live = [(at, s) for at, s in spent if at > now - WINDOW]
    total = sum(s for _, s in live)
    for at, seconds in live:
        if total < budget:
            break
        total -= seconds
        wait = (at + WINDOW - now).total_seconds()
        if total < budget:
            return max(1, math.ceil(wait))
    return 0 if total < budget else max(1, math.ceil(WINDOW.total_seconds()))


def refusal(budget: float, wait: int) -> str:
    """What a refused learner reads (the API's detail; the page shows its localized form, web/i18n.py)."""
    return (f"GPU time used up: {budget:g} GPU-seconds an hour per learner; your next GPU submission is possible in "
            f"{wait} s")


def gpu_exercises(course, exercise) -> list[str]:
    """The exercises whose gradings count against a submission to `exercise`'s GPU budget: the course's CUDA
    exercises when `exercise` is one of them, else none (a CPU submission is never refused for GPU time)."""
    from judge.parent.requirements import needs_cuda

    return [e.id for e in course.all() if needs_cuda(e)] if needs_cuda(exercise) else []
