"""The report's cost section in the terminal: one line under a report, a table for `practice show ID --cost`."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from judge.costs import view as cost_view
from judge.reports.i18n import T, text
from judge.reports.report import CostSection

COST_TITLE = T("What compiling bought (kernels, bytes moved, time)")
NO_COST = T("This grading has no cost section: the exercise declares no [cost] inputs.")
COLUMNS = (T("function"), T("eager ops"), T("eager bytes"), T("kernels + extern"), T("compiled bytes"),
           T("saved"), T("compiling: frames · graphs · guards · s"))
GPU_COLUMNS = (T("GPU µs per call (eager → compiled)"), T("CPU µs per step"))


def print_cost_line(console: Console, section: CostSection | None, lang: str) -> None:
    """The one-line summary under a report, when it has a cost section."""
    line = cost_view.summary(section)
    if line is not None:
        console.print(f"[cyan]{escape(text(line, lang))}[/]", soft_wrap=True)


def print_cost(console: Console, section: CostSection | None, lang: str) -> None:
    """The table of every function's figures and what they are."""
    console.rule(escape(text(COST_TITLE, lang)))
    if section is None:
        console.print(f"[dim]{escape(text(NO_COST, lang))}[/]")
        return
    rows = cost_view.rows(section)
    timed = any(r.gpu_time for r in rows)
    table = Table(show_lines=False)
    for column in COLUMNS + (GPU_COLUMNS if timed else ()):
        table.add_column(escape(text(column, lang)))
    missing = []
    for row in rows:
        if row.unavailable is not None:  # why there are no figures: a sentence, said under the table at full width
            table.add_row(escape(text(row.label, lang)), *["—"] * (len(COLUMNS) - 1 + (2 if timed else 0)))
            missing.append(row)
            continue
        cells = [row.eager_ops, row.eager_bytes, row.kernels, row.compiled_bytes, row.saving, row.compiling]
        table.add_row(escape(text(row.label, lang)), *map(escape, cells + ([row.gpu_time, row.cpu_per_step]
                                                                            if timed else [])))
    console.print(table)
    for row in missing:
        console.print(f"  [bold]{escape(text(row.label, lang))}[/]: [dim]{escape(text(row.unavailable, lang))}[/]",
                      soft_wrap=True)
    for row in rows:
        if row.kernel_names:
            console.print(f"  [bold]{escape(text(row.label, lang))}[/]: {escape(row.kernel_names)}", soft_wrap=True)
    console.print(f"[dim]{escape(text(cost_view.note(section), lang))}[/]", soft_wrap=True)
    if any(row.compiling for row in rows):
        console.print(f"[dim]{escape(text(cost_view.compile_note(), lang))}[/]", soft_wrap=True)
