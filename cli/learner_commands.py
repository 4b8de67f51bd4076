"""A learner's commands: list, grade (one-shot or --watch), playground, hint, show."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape

from cli.daemon_commands import daemon_settings
from cli.options import (
    DAEMON_BACKEND,
    MANY_GRADINGS_BACKEND,
    ONE_GRADING_BACKEND,
    console,
    err_console,
    exercises_option,
    fail,
    lang_option,
    load,
    sandbox_option,
    workspace_option,
)
from judge.parent.exercise import ExerciseError, load_course
from judge.reports.i18n import T, text

GRADE_ONE = T("Grade one:")


@click.command("list")
@exercises_option
@workspace_option
@lang_option
@click.option("--topics", is_flag=True, help="What the course covers: each exercise's section, idea and tags.")
def list_exercises(exercises_dir, workspace, lang, topics):
    """List exercises with your state: not started, failing, solved."""
    from cli.render import print_exercise_list
    from cli.workspace import Workspace

    try:
        course = load_course(exercises_dir)
    except ExerciseError as exc:
        fail(str(exc), lang)
    if topics:
        from rich.table import Table

        from cli.topics import topic_rows

        table = Table("section", "exercise", "idea", "tags")
        for row in topic_rows(course, lang):
            table.add_row(*(escape(cell) for cell in row))
        console.print(table)
        return
    from judge.parent.requirements import NEEDS_CUDA, needs_cuda

    ws = Workspace(workspace)
    print_exercise_list(console, [(e.order, e.id, e.title.get(lang), e.difficulty, ws.status(e),
                                   NEEDS_CUDA if needs_cuda(e) else "") for e in course], lang)
    console.print(f"{escape(text(GRADE_ONE, lang))} [bold]{escape('python practice/judge.py EXERCISE [FILE]')}[/]")


@click.command()
@click.argument("exercise_id", metavar="EXERCISE")
@click.argument("file", required=False, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--watch", is_flag=True, help="Grade again on every save.")
@click.option("--no-daemon", is_flag=True, help="Grade in fresh processes, without the background judge (which "
                                                "keeps warm workers between gradings; PRACTICE_DAEMON=0 does the "
                                                "same; `practice daemon --help`).")
@exercises_option
@workspace_option
@sandbox_option
@lang_option
def grade(exercise_id, file, as_json, watch, no_daemon, exercises_dir, workspace, sandbox, lang):
    """Grade FILE (default: your copy of the exercise in the workspace, created from the starter)."""
    from cli.terminal_grading import grade_file, watch_file
    from cli.workspace import Workspace

    exercise = load(exercises_dir, exercise_id, lang)
    ws = Workspace(workspace)
    if file is None:
        file, created = ws.ensure(exercise, lang)
        if created and not as_json:
            from cli.showing import show_exercise

            show_exercise(console, exercise, file, lang, ws)
    elif not file.is_file():
        fail(T("{path}: no such file", path=str(file)), lang)
    from judge.parent.requirements import backend_for, cannot_grade_here, cuda_missing
    from judge.shared.tiers import has_cpu_tier

    missing = cannot_grade_here(exercise)
    if missing and (watch or not has_cpu_tier(exercise)):
        fail(T("{exercise} needs a CUDA GPU ({reason}): grade it on a machine with one (the web app sends it "
               "to a GPU grader).", exercise=exercise.id, reason=cuda_missing()), lang)
    asked = sandbox
    sandbox = backend_for(exercise, sandbox or (MANY_GRADINGS_BACKEND if watch else ONE_GRADING_BACKEND))
    if watch:
        watch_file(console, exercise, file, ws, sandbox, lang=lang)
        return
    # The background judge serves the default way (its sandbox is `local`); any other --sandbox is honoured here.
    grader = graded = None
    if not no_daemon and asked in (None, DAEMON_BACKEND) and backend_for(exercise, DAEMON_BACKEND) == DAEMON_BACKEND:
        grader = _daemon_grader(exercise, sandbox, lang)
    if has_cpu_tier(exercise):  # the CPU tier first, warm where it can be (it needs no GPU), then the GPU's
        from cli.terminal_grading import fresh_grading, tiered

        cpu_name = asked or ONE_GRADING_BACKEND
        if not no_daemon and asked in (None, DAEMON_BACKEND):
            grader = _daemon_grader(exercise, cpu_name, lang)  # its notes are said after the grading
        graded = tiered(exercise, grader or fresh_grading(exercise, cpu_name),
                        None if missing else fresh_grading(exercise, sandbox))
    accepted = grade_file(console, exercise, file, ws, sandbox, as_json, lang=lang, grader=graded or grader)
    for note in grader.notes if grader is not None else []:
        err_console.print(f"[dim]{escape(text(note, lang))}[/]", soft_wrap=True)
    sys.exit(0 if accepted else 1)


def _daemon_grader(exercise, sandbox_name: str, lang: str):
    """The background judge's client for this exercise (grading in `sandbox_name` when it cannot), or None when
    PRACTICE_DAEMON=0 turns it off."""
    from cli.daemon import DaemonGrader

    settings = daemon_settings(lang)
    if not settings.enabled:
        return None

    def fresh():
        from judge.parent.grading import make_sandbox

        return make_sandbox(sandbox_name)

    return DaemonGrader(exercise, settings, fresh)



@click.command("playground")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--call", "calls", multiple=True, metavar="EXPR",
              help="A call of your function on example inputs, e.g. \"step(torch.randn(8), 2)\" (repeat it for "
                   "several calls); without it, the file's __practice__ block says what to compile "
                   "(judge/parent/playground.py).")
@click.option("--json", "as_json", is_flag=True, help="Print what was found as JSON.")
@sandbox_option
@lang_option
def playground_command(file, calls, as_json, sandbox, lang):
    """The playground: compile FILE's function on its example inputs and show the graph breaks, the recompiles
    with the line behind each guard, and what the compiler made of it. No verdict."""
    from cli.playground import playground_file
    from judge.parent.playground import FormError

    if not file.is_file():
        fail(T("{path}: no such file", path=str(file)), lang)
    try:
        sys.exit(playground_file(console, file, list(calls), sandbox or ONE_GRADING_BACKEND, as_json, lang))
    except FormError as exc:
        fail(T("{path}: {error}", path=str(file), error=exc.message), lang)


@click.command()
@click.argument("exercise_id", metavar="EXERCISE")
@exercises_option
@workspace_option
@lang_option
def hint(exercise_id, exercises_dir, workspace, lang):
    """Show the next hint for EXERCISE (hints go from gentle to explicit)."""
    from cli.workspace import Workspace

    exercise = load(exercises_dir, exercise_id, lang)
    index = Workspace(workspace).next_hint(exercise)
    if index is None:
        index = len(exercise.hints) - 1
        last = T("That was the last hint; here it is again.")
        console.print(f"[dim]{escape(text(last, lang))}[/]")
    if index < 0:
        fail(T("{exercise} has no hints", exercise=exercise.id), lang)
    label = T("Hint {number}/{count}:", number=index + 1, count=len(exercise.hints))
    console.print(f"[bold]{escape(text(label, lang))}[/] {exercise.hints[index].get(lang)}")


@click.command()
@click.argument("exercise_id", metavar="EXERCISE")
@exercises_option
@workspace_option
@lang_option
@click.option("--graphs", is_flag=True, help="Show what the compiler made of your code in the last grading: each "
                                             "graph Dynamo captured, recompile reasons, guards, Inductor's code.")
@click.option("--cost", "cost", is_flag=True, help="Show what compiling bought in the last grading: ATen ops and "
                                                  "bytes eager, kernels and Inductor's byte estimate compiled, for "
                                                  "yours, the reference and the original.")
def show(exercise_id, exercises_dir, workspace, lang, graphs, cost):
    """Show the statement of EXERCISE, your file and the hints (with --graphs: the compiler's view; with --cost:
    the cost figures)."""
    from cli.cost_render import print_cost
    from cli.render import print_compiler_view, program, prose
    from cli.showing import show_exercise
    from cli.workspace import Workspace

    exercise = load(exercises_dir, exercise_id, lang)
    ws = Workspace(workspace)
    if graphs or cost:
        report = ws.last_report(exercise.id)
        if report is None:
            first = T("{exercise} has not been graded here yet: run `{program} {exercise}` first.",
                      exercise=exercise.id, program=program())
            console.print(f"[yellow]{prose(first, lang)}[/]", soft_wrap=True)
            sys.exit(1)
        if graphs:
            print_compiler_view(console, report.compiler, lang)
        if cost:
            print_cost(console, report.cost, lang)
        return
    path, _ = ws.ensure(exercise, lang)
    show_exercise(console, exercise, path, lang, ws)
