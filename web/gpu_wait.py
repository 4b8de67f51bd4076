"""Where a file that passed its CPU tier stands in the GPU queue: its place and an estimate of the wait.

The place counts the GPU exercises' submissions queued before it; the estimate is that many gradings (its own
included) at the median duration of the last GPU gradings stored (`PRIOR_S` before any), spread over the GPU
graders seen (one when none was: the wait then lasts until one starts).
"""

from __future__ import annotations

import statistics

PRIOR_S = 30.0  # a GPU grading before any was measured here: a cold one took 12 to 54 s on an H200
RECENT = 20  # gradings the median is taken over


def standing(store, submission, gpu_exercise_ids: list[str], graders: int = 1) -> tuple[int, float]:
    """(place in the GPU queue, 1 = next; estimated seconds until its verdict)."""
    position = store.queued_ahead(submission, gpu_exercise_ids) + 1
    durations = store.recent_durations(gpu_exercise_ids, RECENT)
    each = statistics.median(durations) if durations else PRIOR_S
    return position, round(position * each / max(1, graders), 1)
