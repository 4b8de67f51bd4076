"""How the web app grades: the sandbox it picks, and the grade function its queue workers call."""

from __future__ import annotations

import shutil
import threading
from typing import Callable

from judge.report import ProgressEvent, Report
from sandbox import Sandbox, get_sandbox
from web.course import Course
from web.queue import GradeFn, internal_error
from web.settings import Settings
from web.store import Submission


class StartupError(Exception):
    """The app cannot start as configured; the message says what to change."""


def choose_sandbox(settings: Settings) -> str:
    """The backend name to use: bwrap when available for 'auto'; 'none' only when explicitly allowed."""
    name = settings.sandbox
    if name == "auto":
        if shutil.which("bwrap"):
            return "bwrap"
        if not settings.allow_unsandboxed:
            raise StartupError("no sandbox available: install bubblewrap (apt-get install bubblewrap), "
                               "use --sandbox docker, or set PRACTICE_ALLOW_UNSANDBOXED=1 to run submissions "
                               "unsandboxed (never on a shared server)")
        return "none"
    if name == "none" and not settings.allow_unsandboxed:
        raise StartupError("sandbox 'none' runs submissions as this user; set PRACTICE_ALLOW_UNSANDBOXED=1 "
                           "to allow it (never on a shared server)")
    return name


def make_grade_fn(course: Course, sandbox_name: str) -> tuple[GradeFn, Callable[[], None]]:
    """A grade function for the queue (one sandbox per worker thread) and a function that closes them."""
    from judge import grade  # imported late: the core pulls in torch-related modules

    local = threading.local()
    made: list[Sandbox] = []
    lock = threading.Lock()

    def sandbox() -> Sandbox:
        if getattr(local, "sandbox", None) is None:
            local.sandbox = get_sandbox(sandbox_name)
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

    def close() -> None:
        with lock:
            for box in made:
                box.close()
            made.clear()

    return grade_submission, close
