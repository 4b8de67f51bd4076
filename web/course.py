"""The course as the web app sees it: exercises loaded once, or reloaded when the folder changes."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from judge.parent.exercise import Exercise, ExerciseError, load_course

log = logging.getLogger(__name__)


class Course:
    """Exercises by id, in course order. With `reload=True` a watcher reloads them after edits."""

    def __init__(self, root: Path, reload: bool = False):
        self.root = Path(root)
        self._lock = threading.Lock()
        self._exercises = self._load()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        if reload:
            self._watcher = threading.Thread(target=self._watch, name="course-watch", daemon=True)
            self._watcher.start()

    def _load(self) -> dict[str, Exercise]:
        return {e.id: e for e in load_course(self.root)}

    def all(self) -> list[Exercise]:
        with self._lock:
            return list(self._exercises.values())

    def get(self, exercise_id: str) -> Exercise | None:
        with self._lock:
            return self._exercises.get(exercise_id)

    def reload(self) -> None:
        """Load the folder again; a broken edit keeps the previous course and is logged."""
        try:
            exercises = self._load()
        except ExerciseError as exc:
            log.error("exercises not reloaded: %s", exc)
            return
        with self._lock:
            self._exercises = exercises
        log.info("exercises reloaded: %d", len(exercises))

    def _watch(self) -> None:
        from watchfiles import watch

        for _changes in watch(self.root, stop_event=self._stop, debounce=300):
            self.reload()

    def close(self) -> None:
        self._stop.set()
