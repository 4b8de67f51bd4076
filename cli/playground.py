"""`practice playground FILE [--call EXPR]`: the playground in the terminal. What torch.compile does with your
function on your inputs (judge/parent/playground.py): the graph breaks with your lines and PyTorch's registry ids, each
recompile with the guard that failed and the line that added it, the compiles call by call, and the compiler's
view. The same sections as the web playground; no verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cli.render import CODE_STYLE, inline_code, print_compiler_view, prose, say
from judge.reports.i18n import T, in_code
from judge.reports.report import localized

BREAKS = T("Graph breaks")
NO_BREAKS = T("No graph break: each call ran as whole graphs.")
RECOMPILES = T("Recompiles")
NO_RECOMPILES = T("No recompile: every call after the first reused a compiled graph.")
TIMELINE = T("The compiles, call by call")
PYTORCH = T("PyTorch says")
MORE = T("more:")
PROBLEM = T("The run stopped:")
STAGES = T("Inductor's result differs from the graph run op by op")


def where(location, lang: str) -> str:
    if location is None:
        return say(T("a line outside your file"), lang)
    return prose(T("line {line} (`{code}`)", line=location.line, code=in_code(location.text)), lang)


def print_playground(console: Console, report, lang: str = "en") -> None:
    """A PlaygroundReport in `lang`: what was found, section by section (the web playground shows the same)."""
    report = localized(report, lang)
    console.print(f"[bold]{inline_code(report.summary)}[/]")
    problem = report.problem
    if problem is not None and problem.message and problem.message != report.summary:  # not said twice
        console.print(f"[red]{say(PROBLEM, lang)}[/] {escape(problem.exc_type)}: "
                      f"{escape(problem.message.splitlines()[0][:300])}")
    # A run that stopped early measured only what it found before it stopped: no all-clear after an error.
    if report.breaks or report.complete:
        console.rule(say(BREAKS, lang))
    if not report.breaks and report.complete:
        console.print(f"[green]{say(NO_BREAKS, lang)}[/]")
    for n, diag in enumerate(report.breaks, 1):
        gb_id = f"  [cyan]{diag.gb_id}[/]" if diag.gb_id else ""
        console.print(f"[bold]{n}. {where(diag.location, lang)}[/]{gb_id}")
        if diag.explanation:
            console.print(f"   {inline_code(diag.explanation)}")
        if diag.pytorch is not None:
            words = diag.pytorch
            console.print(f"   [yellow]{say(PYTORCH, lang)}[/] {escape(words.title)}: {inline_code(words.explanation)}")
            for hint in words.hints.splitlines():
                console.print(f"     · {inline_code(hint)}", soft_wrap=True)
            console.print(f"   [dim]{say(MORE, lang)} {escape(words.url)}[/]", soft_wrap=True)
        elif diag.reason:
            console.print(f"   [dim]{escape(diag.reason.splitlines()[0][:200])}[/]")
    if report.recompiles or report.complete:
        console.rule(say(RECOMPILES, lang))
    if not report.recompiles and report.complete:
        console.print(f"[green]{say(NO_RECOMPILES, lang)}[/]")
    for n, origin in enumerate(report.recompiles, 1):
        times = f"  [dim]×{origin.count}[/]" if origin.count > 1 else ""  # the same finding, said once
        console.print(f"[bold]{n}. [{CODE_STYLE}]{escape(origin.guard)}[/][/] ← {where(origin.location, lang)}{times}")
        if origin.also:  # the pieces after a graph break check the same guard: one finding, its other lines
            also = T("the same guard, checked again after a graph break: line {lines}",
                     lines=", ".join(str(location.line) for location in origin.also))
            console.print(f"   [dim]{escape(say(also, lang))}[/]")
        console.print(f"   {inline_code(origin.explanation)}")
    if report.stages:  # your code or the compiler: which stage changes the numbers (judge/verifier_side/stages.py)
        console.rule(say(STAGES, lang))
        for finding in report.stages:
            console.print(f"[yellow]•[/] {inline_code(finding.explanation)}")
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
    if report.complete or (report.compiler is not None and report.compiler.graphs):
        print_compiler_view(console, report.compiler, lang)
    if report.cost is not None:  # the first call's figures, measured by the verifier (judge.verifier_side.playground)
        from cli.cost_render import print_cost
        from judge.reports.report import CostSection

        print_cost(console, CostSection.model_validate(report.cost), lang)
    if report.sandbox:  # empty where nothing ran (a file not of the form)
        footer = T("{seconds} s · torch {torch} · sandbox {sandbox}", seconds=format(report.duration_s, ".1f"),
                   torch=report.torch_version, sandbox=report.sandbox)
        console.print(f"[dim]{say(footer, lang)}[/]")


def write_calls(path: Path, source: str, calls: list[str]) -> tuple[str, bool]:
    """The file's source with a `__practice__` block for `calls`, and whether it was written into `path` (only
    where the file has no block: one it has is left as it is). FormError: a call not of the form."""
    from judge.parent.playground import has_form, with_calls

    with_block = with_calls(source, calls)  # FormError: the caller's usage error, before anything is written
    if has_form(source):
        return with_block, False
    path.write_text(with_block, encoding="utf-8", errors="surrogateescape")
    return with_block, True


def playground_file(console: Console, path: Path, calls: list[str], sandbox_name, as_json: bool, lang: str) -> int:
    """Run the playground on `path` in the sandbox backend `sandbox_name` (or a Sandbox made already): 0 when it
    ran, 1 when the run stopped early (the report says why). With `calls` and a file without a `__practice__`
    block, the block for them is written at the end of the file (docs/playground.md)."""
    from cli.render import program
    from judge.parent.playground import has_form, run_playground

    source = path.read_text(encoding="utf-8", errors="surrogateescape")
    note = None
    if calls:
        source, written = write_calls(path, source, calls)
        if not written:
            note = T("{path} has a `__practice__` block already: these calls replace its calls for this run only.",
                     path=str(path))
        else:
            note = T("Wrote the `__practice__` block for these calls at the end of {path}: from now on "
                     "`{program} playground {path}` runs them.", path=str(path), program=program())
    sandbox = make_sandbox_of(sandbox_name)
    try:
        report = run_playground(source, sandbox=sandbox, filename=path.name)
    finally:
        if isinstance(sandbox_name, str):
            sandbox.close()
    if as_json:
        console.print_json(json.dumps(report.model_dump(mode="json")))
        return 1 if report.problem is not None else 0
    if note is not None:
        console.print(prose(note, lang), soft_wrap=True)
    print_playground(console, report, lang)
    if not calls and not has_form(source):
        write_it = T("Or let the command write it: `{program} playground {path} --call \"NAME(ARGUMENTS)\"` (repeat "
                     "--call for several calls).", program=program(), path=str(path))
        console.print(prose(write_it, lang), soft_wrap=True)
    return 1 if report.problem is not None else 0


def make_sandbox_of(sandbox_name):
    from judge.parent.grading import make_sandbox

    return make_sandbox(sandbox_name) if isinstance(sandbox_name, str) else sandbox_name
