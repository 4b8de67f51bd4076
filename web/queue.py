"""The grading queue interface, and its embedded implementation: worker threads in this process.

Routes only call `GradingQueue.add(...)` (store and queue a new submission) and `regrade(...)` (grade stored
submissions again under the exercise's current version, after live submissions), and ask `depth()` and
`graders()` for /healthz. `web.pg_queue.ProcrastinateQueue` implements the same interface with graders
in other processes (`practice worker`). Both grade through `web.grading_loop.GradingLoop`: after a verdict
that counts is stored or regraded, each of `listeners` is called with the learner and the exercise (the LTI grade
passback listens there).
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable

from judge.reports.report import ProgressEvent
from web.events import EventHub
from web.fair_queue import FairQueue
from web.grading_loop import GradeFn, GradingLoop, Listener
from web.regrade import Regrade, Regrades
from web.store import QUEUED, Store, Submission
from web.tables import BROWSER


class GradingQueue(abc.ABC):
    """Where submissions wait for a worker."""

    _store: Store
    _regrades: Regrades
    listeners: list[Listener]

    def regrade(self, exercise_id: str, fingerprint: str, *, class_id: str | None = None, latest: bool = False,
                reason: str = "", requested_by: str = "") -> list[Regrade]:
        """Queue a regrade of each finished submission not graded under `fingerprint` yet; the new ones."""
        made = self._regrades.request(exercise_id, fingerprint, class_id=class_id, latest=latest, reason=reason,
                                      requested_by=requested_by)
        for regrade in made:
            self.submit_regrade(regrade.id)
        return made

    @abc.abstractmethod
    def submit_regrade(self, regrade_id: str) -> None:
        """Queue a stored regrade, behind every live submission."""

    def add(self, learner_id: str, exercise, source: str, origin: str = BROWSER, address: str = "") -> Submission:
        """Store a new submission (sent from `origin`: browser, cli, notebook; by the client `address`) and queue
        it."""
        submission = self._store.add(learner_id, exercise.id, source, origin=origin)
        self.submit(submission.id, learner_id=learner_id, address=address)
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
    def submit(self, submission_id: str, learner_id: str = "", address: str = "") -> None:
        """Queue a stored submission for grading (`learner_id` and `address` place it in a fair order, where the
        queue keeps one)."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop taking work; unfinished submissions stay queued in the store."""


class EmbeddedQueue(GradingQueue):
    """An in-process queue (live submissions first, fair between addresses and learners, then regrades in order:
    `web.fair_queue`) feeding `workers` threads, each grading one submission at a time."""

    def __init__(self, store: Store, hub: EventHub, grade: GradeFn, workers: int, sandbox: str = "none",
                 serves_gpu: bool = True, needs_gpu: Callable[[str], bool] = lambda exercise_id: False,
                 listeners: list[Listener] | None = None, tier_first: Callable[[str], bool] = lambda exercise_id: False,
                 gpu_exercises: Callable[[], list[str]] = list):
        """`serves_gpu`: this process grades exercises that need CUDA; without it their submissions stay queued
        (in the `gpu` queue of `depth()`) until a server that has a GPU grader starts on this store, after their
        CPU tier where the exercise has one (`tier_first`, judge/shared/tiers.py: graded here, then it waits)."""
        self._store, self._hub, self._grade, self._workers = store, hub, grade, workers
        self._serves_gpu, self._needs_gpu = serves_gpu, needs_gpu
        self._tier_first, self._gpu_exercises = tier_first, gpu_exercises
        self._waiting_gpu: set[str] = set()  # passed their CPU tier here, wait for a GPU grader
        self._regrades = Regrades(store.engine)
        self._pending = FairQueue()
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._sandbox = sandbox
        self.loop = GradingLoop(store, hub, grade, "embedded", listeners, requeue_regrade=self.submit_regrade,
                                stopping=self._stopping, to_gpu=self._to_gpu)

    @property
    def listeners(self) -> list[Listener]:  # type: ignore[override]
        return self.loop.listeners

    def graders(self) -> list[dict]:
        import os
        import socket

        from web.tables import now

        queues = ["cpu", "gpu"] if self._serves_gpu else ["cpu"]
        return [{"name": "embedded", "host": socket.gethostname(), "pid": os.getpid(), "queues": queues,
                 "concurrency": self._workers, "sandbox": self._sandbox, "last_seen": now()}]

    def start(self) -> None:
        for submission in self._store.requeue_unfinished():
            self.submit(submission.id, learner_id=submission.learner_id)
        for regrade in self._regrades.requeue_unfinished():
            self.submit_regrade(regrade.id)
        for i in range(self._workers):
            thread = threading.Thread(target=self._work, name=f"grader-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def depth(self) -> dict[str, int]:
        """Submissions waiting: those for a GPU that this process cannot grade under `gpu`, the rest under
        `embedded`."""
        if self._serves_gpu:  # every queued submission is ours (and /healthz reads no sources)
            return {"embedded": self._store.count(QUEUED)}
        waiting = self._store.unfinished()
        gpu = sum(1 for s in waiting if s.status == QUEUED and not self._serves_gpu and self._needs_gpu(s.exercise_id))
        return {"embedded": self._store.count(QUEUED) - gpu, **({"gpu": gpu} if gpu else {})}

    def submit(self, submission_id: str, learner_id: str = "", address: str = "") -> None:
        self._hub.open(submission_id)
        self._hub.publish(submission_id, ProgressEvent(type="queued"))
        if not self._serves_gpu:
            submission = self._store.get(submission_id)
            if submission is not None and self._needs_gpu(submission.exercise_id) and (
                    submission_id in self._waiting_gpu or not self._tier_first(submission.exercise_id)):
                return  # stays queued in the store: a server with a GPU grader takes it up when it starts
        self._pending.put_live(("submission", submission_id), learner_id or submission_id, address)

    def _to_gpu(self, submission: Submission) -> tuple[int, float]:
        """A submission that passed its CPU tier here stays queued for a GPU grader (none in this process)."""
        from web import gpu_wait

        self._waiting_gpu.add(submission.id)
        return gpu_wait.standing(self._store, submission, self._gpu_exercises())

    def submit_regrade(self, regrade_id: str) -> None:
        self._pending.put_regrade(("regrade", regrade_id))

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        for _ in self._threads:
            self._pending.put_stop()
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()

    def _work(self) -> None:
        while not self._stopping.is_set():
            kind, item_id = self._pending.get()
            if kind == "stop" or self._stopping.is_set():
                return
            if kind == "regrade":
                self.run_regrade(item_id)
            else:
                self.run_one(item_id)

    def run_regrade(self, regrade_id: str) -> None:
        """Grade one regrade and store its report beside the first one."""
        self.loop.regrade(regrade_id)

    def run_one(self, submission_id: str) -> None:
        """Grade one submission, store its report, publish `done`, tell the listeners."""
        self.loop.submission(submission_id)
