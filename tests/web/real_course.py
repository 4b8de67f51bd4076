"""Course folders copied from the real course: the book's `graph-break-step` exercise alone, or any exercises."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from judge.shared.paths import EXERCISES_DIR

BOOK_EXERCISE = "graph-break-step"


def real_course(tmp_path: Path, *exercise_ids: str, time_factor: int = 1) -> Path:
    """A course of these real exercises under `tmp_path`. `time_factor`: each exercise's time limit that many times
    as long (a test of a front-end, not of the limit, on a busy machine)."""
    root = tmp_path / "course"
    root.mkdir()
    for exercise_id in exercise_ids:
        shutil.copytree(EXERCISES_DIR / exercise_id, root / exercise_id)
        if time_factor != 1:
            toml = root / exercise_id / "exercise.toml"
            longer = re.sub(r"(?m)^time_seconds = (\d+)", lambda m: f"time_seconds = {time_factor * int(m[1])}",
                            toml.read_text())
            toml.write_text(longer)
    return root


def book_course(tmp_path: Path, time_factor: int = 1) -> Path:
    """The book's exercise alone."""
    return real_course(tmp_path, BOOK_EXERCISE, time_factor=time_factor)


def item_line(starter: str) -> int:
    """The 1-based line of the starter that calls `.item()`."""
    return next(i for i, line in enumerate(starter.splitlines(), 1) if ".item()" in line)
