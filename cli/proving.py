"""`practice prove` (old name `check`): prove exercises and print each solution's expected and actual verdict."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from judge.exercise import ExerciseError, find_exercise, load_course
from judge.installed import version_warning
from judge.proving import Proof, prove
from judge.report import localized
from judge.statement_check import contract_problems


def check_exercises(console: Console, root: Path, ids: list[str], sandbox_name: str, lang: str = "en") -> int:
    """Exit status: 0 when every exercise holds, 1 when a proof fails, 2 when an exercise is malformed.

    The command's own words are English (it is for instructors); what it quotes from a report is in `lang`."""
    from judge.grading import make_sandbox

    try:
        exercises = [find_exercise(root, i) for i in ids] if ids else load_course(root)
    except ExerciseError as exc:
        console.print(f"[red]malformed exercise:[/] {escape(str(exc))}", soft_wrap=True)  # paths stay whole
        return 2
    sandbox = make_sandbox(sandbox_name, **_compile_cache(console, sandbox_name, exercises))
    from web.requirements import NEEDS_CUDA, backend_for, cannot_grade_here

    failed = skipped = 0
    others: dict = {}  # backends besides `sandbox` that some exercises need (a GPU exercise never runs in forks)
    try:
        for exercise in exercises:
            console.rule(exercise.id)
            missing = cannot_grade_here(exercise)
            if missing:
                console.print(f"[yellow]skipped:[/] {escape(exercise.id)} {escape(missing)}")
                skipped += 1
                continue
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
            proofs = prove(exercise, sandbox=others.get(name, sandbox),
                           on_proof=lambda p: _print_proof(console, p, lang))
            failed += sum(not p.ok for p in proofs)
    finally:
        sandbox.close()
        for other in others.values():
            other.close()
    left_out = f", {skipped} skipped ({escape(NEEDS_CUDA)})" if skipped else ""
    console.print(f"[{'red' if failed else 'green'}]{failed} failing proof(s) across {len(exercises)} exercise(s)"
                  f"{left_out}[/]")
    return 1 if failed else 0


def _compile_cache(console: Console, sandbox_name: str, exercises: list) -> dict:
    """Build the trusted compile cache layers of these exercises first (a hardened backend's runs get an overlay
    of them); nothing for the unisolated backends, which share one C++ build cache."""
    from judge import cache_layers

    cache = cache_layers.for_backend(sandbox_name, exercises)
    if cache is None:
        return {}
    with console.status("building the compile cache layers (the reference solutions, trusted, once)"):
        cache_layers.build(cache, exercises, say=lambda text: console.print(f"[dim]{escape(text)}[/]"))
    return {"compile_cache": cache}


def _print_proof(console: Console, proof: Proof, lang: str = "en") -> None:
    mark = "[green]ok[/]  " if proof.ok else "[red]FAIL[/]"
    expected = proof.expected.value + (f" @ {proof.expected_check}" if proof.expected_check else "")
    actual = proof.report.verdict.value + (f" @ {proof.failing_check}" if proof.failing_check else "")
    console.print(f"{mark} {proof.kind:<9} {escape(proof.path):<38} expected {escape(expected):<45} "
                  f"got {escape(actual)}  [dim]{proof.report.duration_s:.1f}s[/]")
    if not proof.ok:
        console.print(f"      [red]{escape(localized(proof.report, lang).summary[:400])}[/]")
