"""`practice prove` (old name `check`): prove exercises and print each solution's expected and actual verdict."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from judge.parent.exercise import ExerciseError, find_exercise, load_course
from judge.parent.proving import Proof, prove
from judge.parent.statement_check import contract_problems
from judge.reports.report import ErrorDiagnostic, localized
from judge.shared.installed import version_warning
from judge.shared.tiers import has_cpu_tier


def check_exercises(console: Console, root: Path, ids: list[str], sandbox_name: str, lang: str = "en",
                    verbose: bool = False) -> int:
    """Exit status: 0 when every exercise holds, 1 when a proof fails, 2 when an exercise is malformed.

    The command's own words are English (it is for instructors); what it quotes from a report is in `lang`;
    `verbose` adds the raw exception (traceback) of every failing proof."""
    from judge.parent.grading import make_sandbox

    try:
        exercises = [find_exercise(root, i) for i in ids] if ids else load_course(root)
    except ExerciseError as exc:
        console.print(f"[red]malformed exercise:[/] {escape(str(exc))}", soft_wrap=True)  # paths stay whole
        return 2
    sandbox = make_sandbox(sandbox_name, **_compile_cache(console, sandbox_name, exercises))
    from judge.parent.requirements import NEEDS_CUDA, backend_for, cannot_grade_here

    failed = skipped = 0
    others: dict = {}  # backends besides `sandbox` that some exercises need (a GPU exercise never runs in forks)
    try:
        for exercise in exercises:
            console.rule(exercise.id)
            missing = cannot_grade_here(exercise)
            if missing and not has_cpu_tier(exercise):
                console.print(f"[yellow]skipped:[/] {escape(exercise.id)} {escape(missing)}")
                skipped += 1
                continue
            if missing:  # what its CPU tier decides is proven here; the rest waits for a GPU machine
                console.print(f"[yellow]CPU tier only:[/] {escape(exercise.id)} {escape(missing)}")
            warning = version_warning(exercise)
            if warning:
                console.print(f"[yellow]warning:[/] {escape(warning)}")
            disagreements = contract_problems(exercise)
            for problem in disagreements:
                console.print(f"[red]FAIL[/] statement vs [contract]: {escape(problem)}", soft_wrap=True)
            failed += len(disagreements)
            name = backend_for(exercise, sandbox_name)
            if name != sandbox_name and name not in others:
                others[name] = make_sandbox(name)
            # Where a GPU grades here, the CPU tier too runs in the exercise's own backend (fresh processes): a warm
            # fork of a process that initialised CUDA cannot use it, even to hide it.
            full = others.get(name, sandbox)
            proofs = prove(exercise, sandbox=full, cpu_sandbox=sandbox if missing else full, gpu_here=not missing,
                           on_proof=lambda p: print_proof(console, p, lang, verbose))
            failed += sum(not p.ok for p in proofs)
    finally:
        sandbox.close()
        for other in others.values():
            other.close()
    left_out = f", {skipped} skipped ({escape(NEEDS_CUDA.en)})" if skipped else ""
    console.print(f"[{'red' if failed else 'green'}]{failed} failing proof(s) across {len(exercises)} exercise(s)"
                  f"{left_out}[/]")
    return 1 if failed else 0


def _compile_cache(console: Console, sandbox_name: str, exercises: list) -> dict:
    """Build the trusted compile cache layers of these exercises first (a hardened backend's runs get an overlay
    of them); nothing for the unisolated backends, which share one C++ build cache."""
    from judge.parent import cache_layers

    cache = cache_layers.for_backend(sandbox_name, exercises)
    if cache is None:
        return {}
    with console.status("building the compile cache layers (the reference solutions, trusted, once)"):
        cache_layers.build(cache, exercises, say=lambda text: console.print(f"[dim]{escape(text)}[/]"))
    return {"compile_cache": cache}


PATH_WIDTH = 30


def print_proof(console: Console, proof: Proof, lang: str = "en", verbose: bool = False) -> None:
    """One proof on one line of fixed columns (cut with an ellipsis, never wrapped); a failing proof is followed
    by its expected and actual outcome and why it failed, in a column that wraps inside itself."""
    expected = proof.expected.value + (f" @ {proof.expected_check}" if proof.expected_check else "")
    actual = proof.report.verdict.value + (f" @ {proof.failing_check}" if proof.failing_check else "")
    row = Table.grid(padding=(0, 1), expand=True)
    row.add_column(width=4, no_wrap=True)
    row.add_column(width=9, no_wrap=True)
    row.add_column(width=PATH_WIDTH, no_wrap=True, overflow="ellipsis")
    row.add_column(justify="right", width=6, no_wrap=True, style="dim")
    row.add_column(no_wrap=True, overflow="ellipsis", ratio=1)  # the one column that gives way
    row.add_row(Text("ok", style="green") if proof.ok else Text("FAIL", style="red"), proof.kind, proof.path,
                f"{proof.report.duration_s:.1f}s", actual if proof.ok else "")
    console.print(row)
    if not proof.ok:
        console.print(why_table(proof, lang, verbose, expected, actual))


def why_reasons(proof: Proof, lang: str = "en", verbose: bool = False) -> list[tuple[str, str]]:
    """(label, text) of everything that explains a failing proof: verdict, check, its message, the pinned
    graph-break id, each language problem and, with `verbose`, the raw exception of the failing check."""
    report = localized(proof.report, lang)
    failure = report.first_failure()
    reasons: list[tuple[str, str]] = []
    if proof.report.verdict is not proof.expected:
        reasons.append(("verdict", f"{proof.report.verdict.value}, pinned {proof.expected.value}"))
    if proof.expected_check and proof.failing_check != proof.expected_check:
        reasons.append(("check", f"{proof.failing_check or 'none failed'}, pinned {proof.expected_check}"))
    if proof.break_problem():
        reasons.append(("break id", proof.break_problem()))
    if failure is not None:
        reasons.append(("failed", f"{failure.name}: {failure.message or '(no message)'}"))
    elif report.summary:
        reasons.append(("summary", report.summary))
    if proof.verdict_ok:
        reasons += [("language", problem) for problem in proof.language_problems()]
    if verbose:
        errors = [d for d in (failure.diagnostics if failure else []) + list(report.diagnostics)
                  if isinstance(d, ErrorDiagnostic) and (d.traceback or d.message)]
        reasons += [("exception", e.traceback or f"{e.exc_type}: {e.message}") for e in errors]
        if not errors:
            reasons.append(("exception", "none: the check failed without an exception of its own"))
    return reasons


def why_table(proof: Proof, lang: str = "en", verbose: bool = False, expected: str = "", actual: str = "") -> Table:
    """A failing proof's reasons: a label column and a text column that wraps inside itself."""
    table = Table.grid(padding=(0, 1))
    table.add_column(width=4)
    table.add_column(style="bold", no_wrap=True, width=9)
    table.add_column(overflow="fold", ratio=1)
    if expected:
        table.add_row("", "expected", expected)
        table.add_row("", "got", actual)
    for label, reason in why_reasons(proof, lang, verbose):
        table.add_row("", label, Text(reason, style="red" if label != "exception" else ""))
    return table
