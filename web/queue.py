"""The grading queue interface, and its embedded implementation: worker threads in this process.

Routes only call `GradingQueue.add(...)` (store and queue a new submission) and ask `depth()` and
`graders()` for /healthz. `web.pg_queue.ProcrastinateQueue` implements the same interface with graders
in other processes (`practice worker`).
"""

from __future__ import annotations

import abc
import logging
import queue as _queue
import threading
from typing import Callable

from judge.report import ProgressEvent, Report, Verdict
from web.events import EventHub
from web.store import QUEUED, Store, Submission
from web.tables import BROWSER

log = logging.getLogger(__name__)

# Grades one stored submission; publishes running/check events through the callback.
GradeFn = Callable[[Submission, Callable[[ProgressEvent], None]], Report]


class GradingQueue(abc.ABC):
    """Where submissions wait for a worker."""

    def add(self, learner_id: str, exercise, source: str, origin: str = BROWSER) -> Submission:
        """Store a new submission (sent from `origin`: browser, cli, notebook) and queue it."""
        submission = self._store.add(learner_id, exercise.id, source, origin=origin)
        self.submit(submission.id)
        return submission

    def depth(self) -> dict[str, int]:
        """Submissions waiting for a grader, per queue."""
        return {"embedded": self._store.count(QUEUED)}

    @abc.abstractmethod
    def graders(self) -> list[dict]:
        """The graders seen in the last minute: name, host, queues, concurrency, sandbox, last_seen."""

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

    def __init__(self, store: Store, hub: EventHub, grade: GradeFn, workers: int, sandbox: str = "none",
                 serves_gpu: bool = True, needs_gpu: Callable[[str], bool] = lambda exercise_id: False):
        """`serves_gpu`: this process grades exercises that need CUDA; without it their submissions stay queued
        (in the `gpu` queue of `depth()`) until a server that has a GPU grader starts on this store."""
        self._store, self._hub, self._grade, self._workers = store, hub, grade, workers
        self._serves_gpu, self._needs_gpu = serves_gpu, needs_gpu
        self._pending: _queue.Queue[str | None] = _queue.Queue()
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._sandbox = sandbox

    def graders(self) -> list[dict]:
        import os
        import socket

        from web.tables import now

        queues = ["cpu", "gpu"] if self._serves_gpu else ["cpu"]
        return [{"name": "embedded", "host": socket.gethostname(), "pid": os.getpid(), "queues": queues,
                 "concurrency": self._workers, "sandbox": self._sandbox, "last_seen": now()}]

    def start(self) -> None:
        for submission in self._store.requeue_unfinished():
            self.submit(submission.id)
        for i in range(self._workers):
            thread = threading.Thread(target=self._work, name=f"grader-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def depth(self) -> dict[str, int]:
        """Submissions waiting: those for a GPU that this process cannot grade under `gpu`, the rest under
        `embedded`."""
        waiting = self._store.unfinished()
        gpu = sum(1 for s in waiting if s.status == QUEUED and not self._serves_gpu and self._needs_gpu(s.exercise_id))
        return {"embedded": self._store.count(QUEUED) - gpu, **({"gpu": gpu} if gpu else {})}

    def submit(self, submission_id: str) -> None:
        self._hub.open(submission_id)
        self._hub.publish(submission_id, ProgressEvent(type="queued"))
        if not self._serves_gpu:
            submission = self._store.get(submission_id)
            if submission is not None and self._needs_gpu(submission.exercise_id):
                return  # stays queued in the store: a server with a GPU grader takes it up when it starts
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
        submission = self._store.mark_running(submission_id, "embedded")
        if submission is None:  # finished already
            return
        publish = lambda event: self._hub.publish(submission_id, event)  # noqa: E731
        try:
            report = self._grade(submission, publish)
        except Exception as exc:  # infrastructure failure: an error verdict, never a crash of the worker
            log.exception("grading %s failed", submission_id)
            report = internal_error(submission.exercise_id, f"{type(exc).__name__}: {exc}")
        if self._stopping.is_set():
            return  # stopped mid-grading: the submission stays unfinished and is re-queued at start
        if self._store.finish(submission_id, report, "embedded"):
            publish(ProgressEvent(type="done", report=report))


def internal_error(exercise_id: str, detail: str) -> Report:
    return Report(exercise_id=exercise_id, verdict=Verdict.INTERNAL_ERROR,
                  summary="The judge failed on this submission; this is not your fault. Please submit again.",
                  stderr=detail[:2000])
