"""Print reports and lists with rich. Rendering only: reports are made by the judge."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from judge.report import Report, Verdict

STYLE = {Verdict.ACCEPTED: "bold green"}
STATE_STYLE = {"solved": "green", "failing": "red", "not started": "dim"}


def verdict_style(verdict: Verdict) -> str:
    return STYLE.get(verdict, "bold red")


def print_report(console: Console, report: Report, source_path: Path | None = None) -> None:
    """The verdict first, then each check, with the learner's own line quoted where a check points at one."""
    console.print(Panel(escape(report.summary), title=f"[{verdict_style(report.verdict)}]{report.verdict.value}",
                        title_align="left", expand=False))
    if report.trust == "self-checked":
        console.print("[yellow]self-checked exercise:[/] part of this verdict rests on what your code's own "
                      "process reported (see docs/security.md).")
    if report.version_warning:
        console.print(f"[yellow]warning:[/] {escape(report.version_warning)}")
    shown: set[str] = set()
    for check in report.checks:
        mark = "[green]✓[/]" if check.passed else "[red]✗[/]"
        title = f" — {escape(check.title)}" if check.title else ""
        console.print(f" {mark} {escape(check.name)}{title}")
        if check.passed:
            continue
        if check.message in shown:
            console.print("     [dim](same failure as above)[/]")
            continue
        shown.add(check.message)
        console.print(f"     [red]{escape(check.message)}[/]")
        _print_diagnostics(console, check.diagnostics, source_path)
    _print_diagnostics(console, report.diagnostics, source_path)
    if report.stdout.strip() and not report.accepted:
        console.print("[dim]your program's output (truncated):[/]")
        console.print(escape(report.stdout[-1500:]), style="dim")
    console.print(f"[dim]{report.duration_s:.1f} s · torch {report.torch_version} · sandbox {report.sandbox}[/]")


def _print_diagnostics(console: Console, diagnostics: list, source_path: Path | None) -> None:
    for diag in diagnostics:
        location = getattr(diag, "location", None)
        if diag.kind == "graph_break" and diag.reason:
            console.print(f"     [yellow]Dynamo:[/] {escape(diag.reason.splitlines()[0][:200])}")
        if diag.kind == "mismatch" and diag.first_mismatches:
            rows = ", ".join(f"{m.index}: expected {m.expected}, got {m.actual}" for m in diag.first_mismatches[:3])
            console.print(f"     [yellow]first mismatches:[/] {escape(rows)}")
        if diag.kind == "recompile" and diag.guard_failures:
            console.print(f"     [yellow]guard failures:[/] {escape('; '.join(diag.guard_failures[:3]))}")
        if location is not None and source_path is not None and source_path.is_file():
            _quote(console, source_path, location.line)


def _quote(console: Console, path: Path, line: int) -> None:
    code = path.read_text(encoding="utf-8", errors="replace")
    console.print(Syntax(code, "python", line_numbers=True, line_range=(max(1, line - 1), line + 1),
                         highlight_lines={line}))


def print_exercise_list(console: Console, rows: list[tuple]) -> None:
    """rows: (order, id, title, difficulty, state) or with a sixth item, a note shown after the title
    (e.g. "needs a CUDA GPU")."""
    table = Table(title="torch-practice exercises")
    for column in ("#", "id", "title", "difficulty", "state"):
        table.add_column(column)
    for order, exercise_id, title, difficulty, state, *note in rows:
        shown = escape(title) + "".join(f" [yellow]({escape(n)})[/]" for n in note if n)
        table.add_row(str(order), exercise_id, shown, "★" * difficulty, f"[{STATE_STYLE.get(state, '')}]{state}[/]")
    console.print(table)
