"""Show an exercise in the terminal: its statement, the learner's file and the hints."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markdown import Markdown

from judge.exercise import Exercise


def show_exercise(console: Console, exercise: Exercise, path: Path, lang: str, workspace) -> None:
    console.print(Markdown(exercise.statement_text(lang)))
    console.print(f"\nYour file: [bold]{path}[/] (started from the starter; edit it and grade again)")
    console.print(f"Hints: {len(exercise.hints)} — `python practice/judge.py hint {exercise.id}` shows the next one.\n")
