"""Print reports and lists with rich, in the learner's language. Rendering only: reports are made by the judge.

The report's own text (summary, check titles and messages, what a diagnostic explains) comes in the language
asked for through `judge.reports.report.localized`; the CLI's own words are `T("...")` of the cli domain
(judge/locale/zh/LC_MESSAGES/cli.po). Raw compiler text (Dynamo's reason, guard failures, tracebacks) stays as
the compiler wrote it, under a label that says so.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from judge.reports.i18n import T, text
from judge.reports.report import VERDICT_NAME, CompilerView, Report, Verdict, localized
from judge.shared import tiers

STYLE = {Verdict.ACCEPTED: "bold green"}
STATE_STYLE = {"solved": "green", "failing": "red", "not started": "dim"}
STATE_TEXT = {"solved": T("solved"), "failing": T("failing"), "not started": T("not started")}
SELF_CHECKED = T("self-checked exercise:")
SELF_CHECKED_WHY = T("part of this verdict rests on what your code's own process reported (see `docs/security.md`).")
WARNING = T("warning:")
LEARNER_PROCESS = T("rests on your code's own process:")
SAME_FAILURE = T("(same failure as above)")


def same_failure_as(check: str) -> T:
    """What a check that repeats an earlier check's finding shows instead (judge.reports.report.mark_repeats)."""
    return T("(the same failure as {check})", check=check)

PROGRAM_OUTPUT = T("your program's output (truncated):")
DYNAMO_REASON = T("Dynamo's reason (raw):")
PYTORCH_SAYS = T("PyTorch's registry:")
GUARD_FAILURES = T("guard failures (raw):")
DETAILS = T("details (raw):")
GRAPH = T("graph:")
LIST_SEPARATOR = T("; ")
GRAPH_LINES = 30  # a graph's code shown in the terminal is cut after this many lines (`--json` has it whole)


def say(message, lang: str) -> str:
    """`message` (a T or a plain string) in `lang`, escaped for rich markup."""
    return escape(text(message, lang))


CODE_STYLE = "bold cyan"


def inline_code(message: str) -> str:
    """A judge message (already in its language) as rich markup: each `code` span styled as code, without its
    backticks; the rest escaped. Text whose backticks do not pair is shown as written."""
    parts = str(message).split("`")
    if len(parts) % 2 == 0:
        return escape(str(message))
    return "".join(f"[{CODE_STYLE}]{escape(part)}[/]" if i % 2 else escape(part) for i, part in enumerate(parts))


def prose(message, lang: str) -> str:
    """`message` (a T or a plain string) in `lang`, as rich markup with its `code` spans shown as code."""
    return inline_code(text(message, lang))


def program() -> str:
    """How the learner started this command, to quote in advice: `python practice/judge.py` for the script
    (as they typed its path), else `practice`."""
    script = sys.argv[0] if sys.argv else ""
    if Path(script).name == "judge.py":
        return f"python {script}"
    return "practice"


def verdict_style(verdict: Verdict) -> str:
    return STYLE.get(verdict, "bold red")


def verdict_title(verdict: Verdict, lang: str) -> str:
    """The verdict's name in `lang` and its code (what scripts and `--json` call it): `Wrong answer · WRONG_ANSWER`."""
    return f"{say(VERDICT_NAME.get(verdict, T.same(verdict.value)), lang)} · {verdict.value}"


def print_report(console: Console, report: Report, source_path: Path | None = None, lang: str = "en") -> None:
    """The verdict first, then each check, with the learner's own line quoted where a check points at one."""
    waiting = tiers.waits_for_gpu(report)  # a passed CPU tier: its ACCEPTED is the tier's, not the exercise's
    report = localized(report, lang)
    title = f"[yellow]{say(tiers.PASSED_TITLE, lang)} · {tiers.CPU_TIER_PASSED}" if waiting else \
        f"[{verdict_style(report.verdict)}]{verdict_title(report.verdict, lang)}"
    console.print(Panel(inline_code(report.summary), title=title, title_align="left", expand=False))
    for section in report.tiers:  # the tiers graded before this report's (judge/shared/tiers.py)
        console.print(f" [dim]{say(tiers.tier_line(section), lang)}[/]")
    if report.trust == "self-checked":
        console.print(f"[yellow]{say(SELF_CHECKED, lang)}[/] {say(SELF_CHECKED_WHY, lang)}")
    if report.version_warning:
        console.print(f"[yellow]{say(WARNING, lang)}[/] {escape(report.version_warning)}")
    shown: set[str] = set()
    for check in report.checks:
        mark = "[green]✓[/]" if check.passed else "[red]✗[/]"
        title = f" — {inline_code(check.title)}" if check.title else ""
        console.print(f" {mark} {escape(check.name)}{title}")
        if check.learner_process:
            console.print(f"     [yellow]{say(LEARNER_PROCESS, lang)}[/] {escape(check.learner_process)}")
        if check.passed:
            continue
        if check.same_as or check.message in shown:  # one finding shown once (judge.reports.report.mark_repeats)
            same = same_failure_as(check.same_as) if check.same_as else SAME_FAILURE
            console.print(f"     [dim]{say(same, lang)}[/]")
            continue
        shown.add(check.message)
        said = check.message
        if check.message and check.message in report.summary:  # the panel above says it already
            said = report.summary
        else:
            console.print(f"     [red]{inline_code(check.message)}[/]")
        _print_diagnostics(console, check.diagnostics, source_path, lang, said=said)
    _print_diagnostics(console, report.diagnostics, source_path, lang, said=report.summary)
    if report.stdout.strip() and not report.accepted:
        console.print(f"[dim]{say(PROGRAM_OUTPUT, lang)}[/]")
        console.print(escape(report.stdout[-1500:]), style="dim")
    from cli.cost_render import print_cost_line  # the cost section's one line (cli/cost_render.py)

    print_cost_line(console, report.cost, lang)
    footer = T("{seconds} s · torch {torch} · sandbox {sandbox}", seconds=format(report.duration_s, ".1f"),
               torch=report.torch_version, sandbox=report.sandbox)
    console.print(f"[dim]{say(footer, lang)}[/]")


def _print_diagnostics(console: Console, diagnostics: list, source_path: Path | None, lang: str,
                       said: str = "") -> None:
    """Each diagnostic (already in `lang`): what it explains, unless the message just printed (`said`) says it
    already, then the raw detail under a label."""
    for diag in diagnostics:
        location = getattr(diag, "location", None)
        if diag.kind == "graph_break":
            if diag.explanation and diag.explanation not in said:
                console.print(f"     {inline_code(diag.explanation)}")
            if diag.reason:
                console.print(f"     [yellow]{say(DYNAMO_REASON, lang)}[/] "
                              f"{escape(diag.reason.splitlines()[0][:200])}")
            if diag.pytorch is not None:  # PyTorch's registry words for the break (judge/compiler/break_registry.py)
                console.print(f"     [yellow]{say(PYTORCH_SAYS, lang)}[/] {diag.pytorch.gb_id} · "
                              f"{escape(diag.pytorch.title)} — {escape(diag.pytorch.url)}", soft_wrap=True)
        if diag.kind == "mismatch" and diag.first_mismatches:
            rows = [say(T("{index}: expected {expected}, got {actual}", index=m.index, expected=m.expected,
                          actual=m.actual), lang) for m in diag.first_mismatches[:3]]
            label = T("first mismatches of {what}:", what=diag.what) if diag.what else T("first mismatches:")
            console.print(f"     [yellow]{say(label, lang)}[/] {say(LIST_SEPARATOR, lang).join(rows)}")
        # your code or the compiler (judge/verifier_side/stages.py)
        if diag.kind == "mismatch" and diag.stage is not None:
            console.print(f"     {inline_code(diag.stage.explanation)}")
        if diag.kind == "recompile" and diag.guard_failures:
            console.print(f"     [yellow]{say(GUARD_FAILURES, lang)}[/] "
                          f"{escape('; '.join(diag.guard_failures[:3]))}")
        if diag.kind == "graph":
            _print_graph(console, diag, lang)
        if diag.kind == "error" and diag.message and diag.message.splitlines()[0] not in said:
            console.print(f"     [yellow]{say(DETAILS, lang)}[/] {escape(diag.exc_type)}: "
                          f"{escape(diag.message.splitlines()[0][:300])}")
        if location is not None and source_path is not None and source_path.is_file():
            _quote(console, source_path, location.line)


def _print_graph(console: Console, diag, lang: str) -> None:
    """A graph the compiler captured or generated: its title, then its first lines of code, the lines that name
    what the message refers to (`highlight`) marked."""
    console.print(f"     [yellow]{say(GRAPH, lang)}[/] {escape(diag.title)}")
    lines = diag.code.splitlines()
    if not lines:
        return
    names = [re.compile(rf"\b{re.escape(name)}\b") for name in diag.highlight]
    marked = {n for n, line in enumerate(lines[:GRAPH_LINES], 1) if any(name.search(line) for name in names)}
    console.print(Syntax("\n".join(lines[:GRAPH_LINES]), "python", line_numbers=False, highlight_lines=marked))
    if len(lines) > GRAPH_LINES:
        more = T("… {count} more lines (`--json` has the whole graph)", count=len(lines) - GRAPH_LINES)
        console.print(f"     [dim]{say(more, lang)}[/]")


def _quote(console: Console, path: Path, line: int) -> None:
    code = path.read_text(encoding="utf-8", errors="replace")
    console.print(Syntax(code, "python", line_numbers=True, line_range=(max(1, line - 1), line + 1),
                         highlight_lines={line}))


def print_exercise_list(console: Console, rows: list[tuple], lang: str = "en") -> None:
    """rows: (order, id, title, difficulty, state) or with a sixth item, a note shown after the title
    (e.g. "needs a CUDA GPU", a T or a string)."""
    table = Table(title=text(T("torch-practice exercises"), lang))
    # The id is what the learner types: never cut nor folded (the title wraps instead, however narrow the terminal).
    longest = max((len(row[1]) for row in rows), default=2)
    table.add_column(text(T.same("#"), lang), no_wrap=True, justify="right")
    table.add_column(text(T("id"), lang), no_wrap=True, min_width=longest)
    table.add_column(text(T("title"), lang), ratio=1, overflow="fold")
    for column in (T("difficulty"), T("state")):
        table.add_column(text(column, lang), no_wrap=True)
    for order, exercise_id, title, difficulty, state, *note in rows:
        shown = escape(title) + "".join(f" [yellow]({say(n, lang)})[/]" for n in note if n)
        table.add_row(str(order), exercise_id, shown, "★" * difficulty,
                      f"[{STATE_STYLE.get(state, '')}]{say(STATE_TEXT.get(state, state), lang)}[/]")
    console.print(table)


COMPILER_VIEW = T("What the compiler made of your code")
RECOMPILES = T("Why it compiled again (raw):")
GUARDS = T("Guards, as Dynamo printed them (raw):")
NO_VIEW = T("Nothing was compiled in this grading.")


def print_compiler_view(console: Console, view: CompilerView | None, lang: str = "en", *,
                        guards: bool = True, kernels: bool = True) -> None:
    """Each graph Dynamo captured (with the learner's lines above its nodes), the recompile reasons, the
    guards and Inductor's code: `practice show EXERCISE --graphs`."""
    console.rule(say(COMPILER_VIEW, lang))
    if view is None:
        console.print(f"[dim]{say(NO_VIEW, lang)}[/]")
        return
    for i, graph in enumerate(view.graphs, 1):
        lines = ", ".join(map(str, graph.learner_lines))
        title, where = T("Graph {n}", n=i), T("from your lines {lines}", lines=lines)
        console.print(f"[bold]{say(title, lang)}[/]" + (f" · {say(where, lang)}" if lines else "")
                      + (f"  [dim]{escape(graph.inputs)}[/]" if graph.inputs else ""))
        console.print(Syntax(graph.code, "python", line_numbers=False))
    if view.recompiles:
        console.print(f"[bold]{say(RECOMPILES, lang)}[/]")
        for reason in view.recompiles:
            console.print(f"  - {escape(reason)}", soft_wrap=True)
    if guards and view.guards:
        console.print(f"[bold]{say(GUARDS, lang)}[/]")
        console.print(escape(view.guards), style="dim", soft_wrap=True)
    for i, code in enumerate(view.kernels if kernels else [], 1):
        heading = T("Code Inductor generated ({n}):", n=i)
        console.print(f"[bold]{say(heading, lang)}[/]")
        console.print(Syntax(code, "python", line_numbers=False))
