"""The grading queue interface, and its embedded implementation: worker threads in this process.

Routes only call `GradingQueue.submit(submission_id)`; a distributed queue can replace
`EmbeddedQueue` by implementing the same three methods.
"""

from __future__ import annotations

import abc
import logging
import queue as _queue
import threading
from typing import Callable

from judge.report import ProgressEvent, Report, Verdict
from web.events import EventHub
from web.store import Store, Submission

log = logging.getLogger(__name__)

# Grades one stored submission; publishes running/check events through the callback.
GradeFn = Callable[[Submission, Callable[[ProgressEvent], None]], Report]


class GradingQueue(abc.ABC):
    """Where submissions wait for a worker."""

    @abc.abstractmethod
    def start(self) -> None:
        """Start workers and re-queue what the store had not finished (restart recovery)."""

    @abc.abstractmethod
    def submit(self, submission_id: str) -> None:
        """Queue a stored submission for grading."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop taking work; unfinished submissions stay queued in the store."""


class EmbeddedQueue(GradingQueue):
    """An in-process FIFO feeding `workers` threads, each grading one submission at a time."""

    def __init__(self, store: Store, hub: EventHub, grade: GradeFn, workers: int):
        self._store, self._hub, self._grade, self._workers = store, hub, grade, workers
        self._pending: _queue.Queue[str | None] = _queue.Queue()
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()

    def start(self) -> None:
        for submission in self._store.requeue_unfinished():
            self.submit(submission.id)
        for i in range(self._workers):
            thread = threading.Thread(target=self._work, name=f"grader-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def submit(self, submission_id: str) -> None:
        self._hub.open(submission_id)
        self._hub.publish(submission_id, ProgressEvent(type="queued"))
        self._pending.put(submission_id)

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        for _ in self._threads:
            self._pending.put(None)
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()

    def _work(self) -> None:
        while not self._stopping.is_set():
            submission_id = self._pending.get()
            if submission_id is None or self._stopping.is_set():
                return
            self.run_one(submission_id)

    def run_one(self, submission_id: str) -> None:
        """Grade one submission, store its report, then publish `done`."""
        submission = self._store.get(submission_id)
        if submission is None or submission.status == "done":
            return
        self._store.mark_running(submission_id)
        publish = lambda event: self._hub.publish(submission_id, event)  # noqa: E731
        try:
            report = self._grade(submission, publish)
        except Exception as exc:  # infrastructure failure: an error verdict, never a crash of the worker
            log.exception("grading %s failed", submission_id)
            report = internal_error(submission.exercise_id, f"{type(exc).__name__}: {exc}")
        if self._stopping.is_set():
            return  # stopped mid-grading: the submission stays unfinished and is re-queued at start
        self._store.finish(submission_id, report)
        publish(ProgressEvent(type="done", report=report))


def internal_error(exercise_id: str, detail: str) -> Report:
    return Report(exercise_id=exercise_id, verdict=Verdict.INTERNAL_ERROR,
                  summary="The judge failed on this submission; this is not your fault. Please submit again.",
                  stderr=detail[:2000])
