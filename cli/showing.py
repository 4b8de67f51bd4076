"""Show an exercise in the terminal: its statement, the learner's file and the hints."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from judge.exercise import Exercise


def show_exercise(console: Console, exercise: Exercise, path: Path, lang: str, workspace) -> None:
    console.print(Markdown(exercise.statement_text(lang)))
    mine = escape(str(path))  # printed whole, never wrapped: a learner copies it
    console.print(f"\nYour file: [bold]{mine}[/] (started from the starter; edit it and grade again)", soft_wrap=True)
    console.print(f"Hints: {len(exercise.hints)} — `python practice/judge.py hint {exercise.id}` shows the next one.\n")
