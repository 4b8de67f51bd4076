"""Show an exercise in the terminal, in the learner's language: its statement, the learner's file and the hints."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from judge.parent.battery import battery
from judge.parent.exercise import Exercise
from judge.reports.i18n import T, text


def show_exercise(console: Console, exercise: Exercise, path: Path, lang: str, workspace) -> None:
    console.print(Markdown(exercise.statement_text(lang)))
    # The path is printed whole, never wrapped: a learner copies it.
    mine = T("Your file: {path} (started from the starter; edit it and grade again)", path=str(path))
    console.print()
    console.print(escape(text(mine, lang)), soft_wrap=True)
    hints = T("Hints: {count} — `python practice/judge.py hint {exercise}` shows the next one.",
              count=len(exercise.hints), exercise=exercise.id)
    console.print(escape(text(hints, lang)))
    proven = battery(exercise)  # what the hidden tests are proven against (judge/parent/battery.py)
    summary = proven.summary()
    if summary is not None:
        console.print(f"[dim]{escape(text(summary, lang))}[/]")
    for line in proven.lines():
        console.print(f"[dim]  · {escape(text(line, lang))}[/]")
    console.print()
