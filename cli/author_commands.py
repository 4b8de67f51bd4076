"""An instructor's commands for the course itself: prove (and its old name, check), new."""

from __future__ import annotations

import sys

import click
from rich.markup import escape

from cli.options import (
    MANY_GRADINGS_BACKEND,
    console,
    exercises_option,
    fail,
    lang_option,
    sandbox_option,
)
from judge.parent.exercise import ExerciseError


@click.command()
@click.argument("exercise_ids", nargs=-1, metavar="[EXERCISE...]")
@exercises_option
@sandbox_option
@lang_option
@click.option("--verbose", "-v", is_flag=True, help="Also print the raw exception of every failing proof.")
def prove(exercise_ids, exercises_dir, sandbox, lang, verbose):
    """Instructors: prove exercises (format, reference passes, starter and wrong solutions fail as pinned)."""
    from cli.proving import check_exercises

    sys.exit(check_exercises(console, exercises_dir, list(exercise_ids), sandbox or MANY_GRADINGS_BACKEND, lang,
                             verbose))


# The proving command's first name (a check is one hidden test of an exercise): still typed, so still served.
check = click.Command("check", params=prove.params, callback=prove.callback, hidden=True,
                              help="The old name of `practice prove`.")


@click.command()
@click.argument("exercise_id", metavar="ID")
@exercises_option
def new(exercise_id, exercises_dir):
    """Instructors: scaffold exercises/ID with every file and a failing hidden test to fill in."""
    from cli.scaffold import scaffold

    try:
        folder = scaffold(exercises_dir, exercise_id)
    except ExerciseError as exc:
        fail(str(exc))
    console.print(f"Created [bold]{escape(str(folder))}[/]. Fill in the files, then run: "
                  f"practice prove {exercise_id}", soft_wrap=True)
