"""`practice doctor FILE [--call EXPR]`: the playground in the terminal. What torch.compile does with your
function on your inputs (judge/doctor.py): the graph breaks with your lines and PyTorch's registry ids, each
recompile with the guard that failed and the line that added it, the compiles call by call, and the compiler's
view. The same sections as the web playground; no verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cli.render import print_compiler_view, say
from judge.i18n import T
from judge.report import localized

BREAKS = T("Graph breaks")
NO_BREAKS = T("No graph break: each call ran as whole graphs.")
RECOMPILES = T("Recompiles")
NO_RECOMPILES = T("No recompile: every call after the first reused a compiled graph.")
TIMELINE = T("The compiles, call by call")
PYTORCH = T("PyTorch says")
MORE = T("more:")
PROBLEM = T("The run stopped:")


def where(location, lang: str) -> str:
    if location is None:
        return say(T("a line outside your file"), lang)
    return say(T("line {line} (`{code}`)", line=location.line, code=location.text), lang)


def print_doctor(console: Console, report, lang: str = "en") -> None:
    """A DoctorReport in `lang`: what was found, section by section (the web playground shows the same)."""
    report = localized(report, lang)
    console.print(f"[bold]{escape(report.summary)}[/]")
    if report.problem is not None:
        console.print(f"[red]{say(PROBLEM, lang)}[/] {escape(report.problem.exc_type)}: "
                      f"{escape(report.problem.message.splitlines()[0][:300] if report.problem.message else '')}")
    console.rule(say(BREAKS, lang))
    if not report.breaks:
        console.print(f"[green]{say(NO_BREAKS, lang)}[/]")
    for n, diag in enumerate(report.breaks, 1):
        gb_id = f"  [cyan]{diag.gb_id}[/]" if diag.gb_id else ""
        console.print(f"[bold]{n}. {where(diag.location, lang)}[/]{gb_id}")
        if diag.explanation:
            console.print(f"   {escape(diag.explanation)}")
        if diag.pytorch is not None:
            words = diag.pytorch
            console.print(f"   [yellow]{say(PYTORCH, lang)}[/] {escape(words.title)}: {escape(words.explanation)}")
            for hint in words.hints.splitlines():
                console.print(f"     · {escape(hint)}", soft_wrap=True)
            console.print(f"   [dim]{say(MORE, lang)} {escape(words.url)}[/]", soft_wrap=True)
        elif diag.reason:
            console.print(f"   [dim]{escape(diag.reason.splitlines()[0][:200])}[/]")
    console.rule(say(RECOMPILES, lang))
    if not report.recompiles:
        console.print(f"[green]{say(NO_RECOMPILES, lang)}[/]")
    for n, origin in enumerate(report.recompiles, 1):
        console.print(f"[bold]{n}. `{escape(origin.guard)}`[/] ← {where(origin.location, lang)}")
        console.print(f"   {escape(origin.explanation)}")
    timeline = report.compiler.timeline if report.compiler else []
    if timeline:
        console.rule(say(TIMELINE, lang))
        table = Table()
        for column in (T.same("#"), T("inputs"), T("compiled"), T("guard that failed"), T("line")):
            table.add_column(say(column, lang))
        for event in timeline:
            table.add_row(str(event.call), escape(event.inputs), str(event.compiled), escape(event.guard),
                          str(event.line or ""))
        console.print(table)
    print_compiler_view(console, report.compiler, lang)
    if report.cost is not None:  # the first call's figures, measured by the verifier (judge.doctor_checks)
        from cli.cost_render import print_cost
        from judge.report import CostSection

        print_cost(console, CostSection.model_validate(report.cost), lang)
    footer = T("{seconds} s · torch {torch} · sandbox {sandbox}", seconds=format(report.duration_s, ".1f"),
               torch=report.torch_version, sandbox=report.sandbox)
    console.print(f"[dim]{say(footer, lang)}[/]")


def doctor_file(console: Console, path: Path, calls: list[str], sandbox_name, as_json: bool, lang: str) -> int:
    """Run the playground on `path` in the sandbox backend `sandbox_name` (or a Sandbox made already): 0 when it
    ran, 1 when the run stopped early (the report says why)."""
    from judge.doctor import doctor, with_calls
    from judge.grading import make_sandbox

    source = path.read_text(encoding="utf-8", errors="surrogateescape")
    if calls:
        source = with_calls(source, calls)  # FormError: the caller's usage error
    sandbox = make_sandbox(sandbox_name) if isinstance(sandbox_name, str) else sandbox_name
    try:
        report = doctor(source, sandbox=sandbox, filename=path.name)
    finally:
        if isinstance(sandbox_name, str):
            sandbox.close()
    if as_json:
        console.print_json(json.dumps(report.model_dump(mode="json")))
    else:
        print_doctor(console, report, lang)
    return 1 if report.problem is not None else 0
