"""A course folder holding only the book's `graph-break-step` exercise, copied from the real course."""

from __future__ import annotations

import shutil
from pathlib import Path

from judge.paths import EXERCISES_DIR

BOOK_EXERCISE = "graph-break-step"


def book_course(tmp_path: Path) -> Path:
    root = tmp_path / "course"
    root.mkdir()
    shutil.copytree(EXERCISES_DIR / BOOK_EXERCISE, root / BOOK_EXERCISE)
    return root


def item_line(starter: str) -> int:
    """The 1-based line of the starter that calls `.item()`."""
    return next(i for i, line in enumerate(starter.splitlines(), 1) if ".item()" in line)
