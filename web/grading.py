"""How the web app grades: the sandbox it picks, and the grade function its queue workers call."""

from __future__ import annotations

import logging
import threading
from typing import Callable

from judge.report import ProgressEvent, Report
from sandbox import Sandbox
from sandbox.backends import UNISOLATED, unavailable_reason
from web.course import Course
from web.errors import StartupError
from web.queue import GradeFn, internal_error
from web.settings import Settings
from web.store import Submission

log = logging.getLogger(__name__)


def choose_sandbox(settings: Settings) -> str:
    """The backend to use: bwrap when available for 'auto'; 'none' only when explicitly allowed."""
    name = settings.sandbox
    if name == "auto":
        reason = unavailable_reason("bwrap")
        if reason is None:
            return "bwrap"
        if not settings.allow_unsandboxed:
            raise StartupError(f"no sandbox available ({reason}); use --sandbox docker, or set "
                               "PRACTICE_ALLOW_UNSANDBOXED=1 to run submissions unsandboxed (never on a shared server)")
        log.warning("bwrap unavailable (%s): grading unsandboxed, as PRACTICE_ALLOW_UNSANDBOXED allows", reason)
        return "none"
    if name in UNISOLATED and not settings.allow_unsandboxed:
        raise StartupError(f"sandbox '{name}' runs submissions as this user, unisolated; set "
                           "PRACTICE_ALLOW_UNSANDBOXED=1 to allow it (never on a shared server)")
    reason = unavailable_reason(name)
    if reason is not None:
        raise StartupError(f"sandbox '{name}' is unavailable: {reason}")
    return name


def make_grade_fn(course: Course, sandbox_name: str) -> tuple[GradeFn, Callable[[], None], Callable[[], None]]:
    """A grade function for the queue (one sandbox per worker thread), a warm-up, and a close function."""
    from judge import grade  # imported late: the core pulls in torch-related modules
    from judge import cache_layers

    local = threading.local()
    made: list[Sandbox] = []
    lock = threading.Lock()
    closed = threading.Event()
    # Trusted Inductor cache layers (built by warm(), in the background): each run gets a private overlay of one.
    cache = cache_layers.for_backend(sandbox_name, course.all())

    def sandbox() -> Sandbox:
        if getattr(local, "sandbox", None) is None:
            from judge.grading import make_sandbox

            local.sandbox = make_sandbox(sandbox_name, **({"compile_cache": cache} if cache else {}))
            with lock:
                made.append(local.sandbox)
        return local.sandbox

    def grade_submission(submission: Submission, publish: Callable[[ProgressEvent], None]) -> Report:
        exercise = course.get(submission.exercise_id)
        if exercise is None:
            return internal_error(submission.exercise_id, "the exercise no longer exists")

        def on_event(event: ProgressEvent) -> None:
            if event.type != "done":  # the queue publishes done after the report is stored
                publish(event)

        return grade(exercise, submission.source, sandbox=sandbox(), on_event=on_event)

    def warm() -> None:
        """Start warm workers before the first submission (backends without them do nothing), and build the
        compile cache layers that are missing in the background."""
        if cache is not None:
            cache_layers.start_build(cache, course.all())
        try:
            getattr(sandbox(), "warm_up", lambda **kwargs: None)(pools=("runner", "verifier"))
        except Exception:  # the first submission reports the problem as its verdict
            if not closed.is_set():  # a server stopped while its workers were starting: nothing failed
                log.exception("sandbox warm-up failed")

    def close() -> None:
        closed.set()
        with lock:
            for box in made:
                box.close()
            made.clear()

    return grade_submission, warm, close
