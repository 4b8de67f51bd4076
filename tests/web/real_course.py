"""A course folder holding only the book's `graph-break-step` exercise, copied from the real course."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from judge.shared.paths import EXERCISES_DIR

BOOK_EXERCISE = "graph-break-step"


def book_course(tmp_path: Path, time_factor: int = 1) -> Path:
    """`time_factor`: the exercise's time limit that many times as long (a test of a front-end, not of the
    limit, on a busy machine)."""
    root = tmp_path / "course"
    root.mkdir()
    shutil.copytree(EXERCISES_DIR / BOOK_EXERCISE, root / BOOK_EXERCISE)
    if time_factor != 1:
        toml = root / BOOK_EXERCISE / "exercise.toml"
        longer = re.sub(r"(?m)^time_seconds = (\d+)", lambda m: f"time_seconds = {time_factor * int(m[1])}",
                        toml.read_text())
        toml.write_text(longer)
    return root


def item_line(starter: str) -> int:
    """The 1-based line of the starter that calls `.item()`."""
    return next(i for i, line in enumerate(starter.splitlines(), 1) if ".item()" in line)
