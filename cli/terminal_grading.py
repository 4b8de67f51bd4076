"""Grade a learner's file from the terminal: a spinner with live checks, then the report, in the learner's language."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from judge.parent.exercise import Exercise
from judge.reports.i18n import T, text
from judge.reports.report import ProgressEvent
from judge.shared import tiers


def _sandbox(name: str):
    from judge.parent.grading import make_sandbox

    return make_sandbox(name)


def _grading_in(exercise: Exercise, sandbox):
    """A grader (source, filename, on_event, **grade's options) -> Report that grades in `sandbox`."""
    from judge.parent.grading import grade

    def grader(source: str, filename: str, on_event=None, **options):
        return grade(exercise, source, sandbox=sandbox, filename=filename, on_event=on_event, **options)

    return grader


def fresh_grading(exercise: Exercise, sandbox_name: str):
    """A grader that makes a `sandbox_name` sandbox for each grading and closes it after."""

    def grader(source: str, filename: str, on_event=None, **options):
        sandbox = _sandbox(sandbox_name)
        try:
            return _grading_in(exercise, sandbox)(source, filename, on_event, **options)
        finally:
            sandbox.close()

    return grader


def tiered(exercise: Exercise, cpu_grader, full_grader):
    """A grader that grades tier by tier (judge/shared/tiers.py): the CPU tier with `cpu_grader` (called with
    tier="cpu"), then, if it passed, the whole grading with `full_grader` (None where no GPU grades here)."""
    from judge.shared.tiers import CPU, grade_tiers

    def grader(source: str, filename: str, on_event=None):
        full = (lambda text: full_grader(text, filename, on_event)) if full_grader else None
        return grade_tiers(exercise, source, grade_full=full,
                           grade_cpu_tier=lambda text: cpu_grader(text, filename, on_event, tier=CPU))[0]

    return grader


def grade_file(console: Console, exercise: Exercise, path: Path, workspace, sandbox_name: str,
               as_json: bool = False, sandbox=None, lang: str = "en", grader=None) -> bool:
    """Grade `path`, print the report in `lang` (or its JSON, the whole report with every language), record
    progress; True when accepted.

    `sandbox`: a sandbox to reuse (the watch loop keeps its warm workers across saves); default: one made
    for this grading and closed after it. `grader`: grades instead, called as `grader(source, filename,
    on_event)` (the background judge's client, cli/daemon.py)."""
    from cli.render import print_report

    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        not_text = T("{path} is not UTF-8 text", path=str(path))
        console.print(f"[red]{escape(text(not_text, lang))}[/]", soft_wrap=True)
        return False
    owned = sandbox is None and grader is None
    if grader is None:
        sandbox = sandbox or _sandbox(sandbox_name)
        grader = _grading_in(exercise, sandbox)
    try:
        if as_json:
            report = grader(source, path.name)
            print(report.model_dump_json(indent=2))
        else:
            done = []
            grading = T("Grading {file} against {exercise} (torch is compiling)…", file=path.name,
                        exercise=exercise.id)
            with console.status(escape(text(grading, lang))) as status:
                def on_event(event: ProgressEvent) -> None:
                    if event.type == "check" and event.check is not None:
                        done.append(event.check)
                        failed = sum(not c.passed for c in done)
                        progress = T("Grading {file}: {done} checks done, {failed} failed, last: {name}…",
                                     file=path.name, done=len(done), failed=failed, name=event.check.name)
                        status.update(escape(text(progress, lang)))

                report = grader(source, path.name, on_event)
            console.print()
            print_report(console, report, path, lang=lang)
    finally:
        if owned:
            sandbox.close()
    workspace.record(exercise.id, tiers.standing(report))
    workspace.save_report(exercise.id, report)
    return report.accepted and not tiers.waits_for_gpu(report)


def watch_file(console: Console, exercise: Exercise, path: Path, workspace, sandbox_name: str,
               stop_event=None, lang: str = "en", watching_event=None) -> None:
    """Grade now and again on every save, until Ctrl+C (or until `stop_event` is set); `watching_event` is set
    once the file is being watched (a save from then on is seen)."""
    from watchfiles import watch

    sandbox = _sandbox(sandbox_name)  # warm workers kept for every save
    try:
        grade_file(console, exercise, path, workspace, sandbox_name, sandbox=sandbox, lang=lang)
        watching = T("Watching {path} — save to grade again, Ctrl+C to stop.", path=str(path))
        console.print(f"[dim]{escape(text(watching, lang))}[/]", soft_wrap=True)
        # an empty set each half second without a change: proof that the watcher runs
        for changes in watch(path, debounce=300, stop_event=stop_event, yield_on_timeout=True, rust_timeout=500):
            if not changes:
                if watching_event is not None:
                    watching_event.set()
                continue
            console.rule(escape(text(T("{file} changed", file=path.name), lang)))
            grade_file(console, exercise, path, workspace, sandbox_name, sandbox=sandbox, lang=lang)
    except KeyboardInterrupt:
        pass
    finally:
        sandbox.close()
