"""The one grading loop of the web's graders: claim, grade, store, publish, then tell the listeners.

Both kinds of grader run it, and differ only in where the work comes from: the embedded queue's threads
(`web.queue.EmbeddedQueue`, in the web process) and `practice worker` (`web.worker`, jobs from Procrastinate on
PostgreSQL); `practice regrade` on SQLite runs its regrades through it too.

- **Order.** The report is stored first (`Store.finish` keeps the first report only, so a duplicate or late
  delivery changes nothing), then `done` is published (in the same transaction where the event hub lives in the
  database: both or neither), and only then are the listeners (the LMS grade passback) told, and only of a
  verdict that counts: one this call stored that is not the grader's own failure (INTERNAL_ERROR).
- **Retries.** An item (a submission or a regrade) is claimed at most `MAX_ATTEMPTS` times: a claim beyond that
  (its graders kept dying on it) gets INTERNAL_ERROR without grading. A regrade that the grader itself fails is
  queued again until its claims run out, then kept aside with its INTERNAL_ERROR, which never counts.
- **Tiers.** A GPU exercise's file that passed its CPU tier on a grader without a GPU (`judge.shared.tiers`) is not
  done: it is queued again for a GPU (`to_gpu`, which says its place and the wait), and a `tier` event tells the
  page; the claim that graded the tier does not count against its attempts.
- **Words.** The grader's own failure reads the same in every language the report carries
  (`judge.parent.outcome.grader_failed`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from judge.parent.outcome import grader_failed
from judge.reports.report import ProgressEvent, Report, Verdict
from judge.shared import tiers
from web.regrade import Regrades
from web.store import Store, Submission

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3  # claims of one submission or regrade; then INTERNAL_ERROR (a live one) or kept aside (a regrade)

# Grades one stored submission; publishes running/check events through the callback.
GradeFn = Callable[[Submission, Callable[[ProgressEvent], None]], Report]
# Hands a submission that passed its CPU tier to the GPU queue: (its place there, an estimate of the wait in s).
ToGpu = Callable[[Submission], tuple[int, float]]
# Told (learner id, exercise id) after a verdict of theirs that counts was stored or regraded.
Listener = Callable[[str, str], None]


def notify(listeners: list[Listener], learner_id: str, exercise_id: str) -> None:
    """Call each listener; one that fails is logged and never undoes the stored verdict."""
    for listener in listeners:
        try:
            listener(learner_id, exercise_id)
        except Exception:
            log.exception("a verdict listener failed for %s on %s", learner_id, exercise_id)


def counts(report: Report) -> bool:
    """Whether a verdict is the learner's (anything but the grader's own failure): only those reach the LMS."""
    return report.verdict != Verdict.INTERNAL_ERROR


class GradingLoop:
    """Grades one item at a time for a grader called `name`: `submission(id)` and `regrade(id)`.

    `hub` publishes progress events (`publish(id, event)`); a hub whose events live in the database
    (`shares_database`) also has `publish_in(connection, id, event)`, and `done` goes there in the report's own
    transaction. `requeue_regrade(id)` queues a failed regrade again (None: it waits, queued, for the next start
    or the reaper). `stopping`, when set while a grading runs, leaves its report unstored (the item is re-queued
    at the next start). `to_gpu`: see `ToGpu` (None: the file waits, queued, for a server with a GPU grader)."""

    def __init__(self, store: Store, hub, grade: GradeFn, name: str, listeners: list[Listener] | None = None,
                 requeue_regrade: Callable[[str], None] | None = None, stopping: threading.Event | None = None,
                 to_gpu: ToGpu | None = None):
        self.store, self.hub, self.grade, self.name = store, hub, grade, name
        self.regrades = Regrades(store.engine)
        self.listeners = list(listeners or [])
        self.requeue_regrade = requeue_regrade
        self.stopping = stopping or threading.Event()
        self.to_gpu = to_gpu

    def submission(self, submission_id: str) -> Report | None:
        """Claim, grade, store, publish `done`, tell the listeners; the report this call stored, else None."""
        submission = self.store.mark_running(submission_id, self.name)
        if submission is None:
            return None  # finished already: a duplicate delivery
        publish = lambda event: self.hub.publish(submission_id, event)  # noqa: E731
        report = self._grade(submission, publish, submission.attempts, f"submission {submission_id}")
        if self.stopping.is_set():
            return None  # stopped mid-grading: the submission stays unfinished and is graded again at start
        if tiers.waits_for_gpu(report):  # its CPU tier passed, no GPU here: not done, queued for one
            self.store.wait_again(submission_id)
            position, wait_s = self.to_gpu(submission) if self.to_gpu is not None else (None, None)
            self.hub.publish(submission_id, ProgressEvent(type="tier", report=report, position=position,
                                                          wait_s=wait_s))
            return None
        if not self._store(submission_id, report):
            return None
        if counts(report):
            notify(self.listeners, submission.learner_id, submission.exercise_id)
        return report

    def regrade(self, regrade_id: str) -> Report | None:
        """Claim a regrade, grade its submission's source under the exercise as it is now, store the new report
        beside the first, tell the listeners; the report this call stored and that counts, else None."""
        claimed = self.regrades.mark_running(regrade_id)
        if claimed is None:
            return None  # finished already, or its submission is gone
        regrade, submission = claimed
        report = self._grade(submission, lambda event: None, regrade.attempts, f"regrade {regrade_id}")
        if self.stopping.is_set() or tiers.waits_for_gpu(report):
            return None  # a regrade of a GPU exercise is graded on a GPU grader only (its queue is `gpu`)
        if not counts(report) and regrade.attempts < MAX_ATTEMPTS:
            log.warning("regrade %s: the grader failed (attempt %d); queued again", regrade_id, regrade.attempts)
            if self.regrades.retry(regrade_id) and self.requeue_regrade is not None:
                self.requeue_regrade(regrade_id)
            return None
        stored = self.regrades.finish(regrade_id, report)
        if not counts(report):
            log.warning("regrade %s: the grader failed %d times; kept aside, the verdict stays", regrade_id,
                        regrade.attempts)
        if not stored or not counts(report):
            return None
        notify(self.listeners, submission.learner_id, submission.exercise_id)
        return report

    def _grade(self, submission: Submission, publish: Callable[[ProgressEvent], None], attempts: int,
               what: str) -> Report:
        """The grader's report, or INTERNAL_ERROR when the claims ran out or the grader raised."""
        if attempts > MAX_ATTEMPTS:
            return grader_failed(submission.exercise_id, f"no grader finished {what} in {MAX_ATTEMPTS} attempts")
        try:
            return self.grade(submission, publish)
        except Exception as exc:  # the grader's own failure: an error verdict, never a crashed grader
            log.exception("grading %s failed", what)
            return grader_failed(submission.exercise_id, f"{type(exc).__name__}: {exc}")

    def _store(self, submission_id: str, report: Report) -> bool:
        """Store the report (first one only), then publish `done`; True when this call stored it."""
        done = ProgressEvent(type="done", report=report)
        if self.hub.shares_database:  # the report and its `done` in one transaction
            return self.store.finish(submission_id, report, self.name,
                                     also=lambda conn: self.hub.publish_in(conn, submission_id, done))
        if not self.store.finish(submission_id, report, self.name):
            return False
        self.hub.publish(submission_id, done)
        return True
