"""Grade a learner's file from the terminal: a spinner with live checks, then the report."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from judge.exercise import Exercise
from judge.report import ProgressEvent


def _sandbox(name: str):
    from judge.grading import make_sandbox

    return make_sandbox(name)


def grade_file(console: Console, exercise: Exercise, path: Path, workspace, sandbox_name: str,
               as_json: bool = False, sandbox=None) -> bool:
    """Grade `path`, print the report (or its JSON), record progress; True when accepted.

    `sandbox`: a sandbox to reuse (the watch loop keeps its warm workers across saves); default: one made
    for this grading and closed after it."""
    from cli.render import print_report
    from judge.grading import grade

    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        console.print(f"[red]{escape(str(path))} is not UTF-8 text[/]", soft_wrap=True)
        return False
    owned = sandbox is None
    sandbox = sandbox or _sandbox(sandbox_name)
    try:
        if as_json:
            report = grade(exercise, source, sandbox=sandbox, filename=path.name)
            print(report.model_dump_json(indent=2))
        else:
            done = []
            with console.status(f"Grading {path.name} against {exercise.id} (torch is compiling)…") as status:
                def on_event(event: ProgressEvent) -> None:
                    if event.type == "check" and event.check is not None:
                        done.append(event.check)
                        failed = sum(not c.passed for c in done)
                        status.update(f"Grading {path.name}: {len(done)} checks done, {failed} failed, "
                                      f"last: {escape(event.check.name)}…")

                report = grade(exercise, source, sandbox=sandbox, filename=path.name, on_event=on_event)
            console.print()
            print_report(console, report, path)
    finally:
        if owned:
            sandbox.close()
    workspace.record(exercise.id, report.verdict.value)
    return report.accepted


def watch_file(console: Console, exercise: Exercise, path: Path, workspace, sandbox_name: str,
               stop_event=None) -> None:
    """Grade now and again on every save, until Ctrl+C (or until `stop_event` is set)."""
    from watchfiles import watch

    sandbox = _sandbox(sandbox_name)  # warm workers kept for every save
    try:
        grade_file(console, exercise, path, workspace, sandbox_name, sandbox=sandbox)
        console.print(f"[dim]Watching {escape(str(path))} — save to grade again, Ctrl+C to stop.[/]",
                      soft_wrap=True)
        for _ in watch(path, debounce=300, stop_event=stop_event):
            console.rule(f"{path.name} changed")
            grade_file(console, exercise, path, workspace, sandbox_name, sandbox=sandbox)
    except KeyboardInterrupt:
        pass
    finally:
        sandbox.close()
