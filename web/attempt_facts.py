"""What the judge measured of one submission, read from its stored report (never graded again).

`facts_of(report)` keeps the few figures a timeline shows: the verdict, the checks passed, each graph break (its
registry id and the learner's line), each recompile and the guard that failed (with the line that added it), the
graphs Dynamo captured, Inductor's kernels and bytes, and the time. `Store.finish` stores them beside the report,
in the same transaction, so a class's timeline never parses reports; a submission graded before they were stored
gets them from its report on reading (`web.timeline`).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from judge.reports.report import GraphBreakDiagnostic, RecompileDiagnostic, Report

LINE_TEXT_CHARS = 120  # the learner's line as quoted beside a break or a guard
LISTED = 8  # breaks and guards kept per submission


class BreakFact(BaseModel):
    """A graph break: PyTorch's registry id and the learner's line."""

    gb_id: str | None = None
    line: int | None = None
    text: str = Field("", description="The learner's line, stripped and cut to LINE_TEXT_CHARS.")


class GuardFact(BaseModel):
    """A recompile: the guard that failed and the learner's line that added it."""

    guard: str
    line: int | None = None


class Facts(BaseModel):
    """One submission's measured facts; None where the report does not say (a load error compiles nothing)."""

    verdict: str
    checks_passed: int = 0
    checks: int = 0
    breaks: list[BreakFact] = []
    recompiles: int = 0
    guards: list[GuardFact] = []
    graphs: int | None = Field(None, description="Graphs Dynamo captured on one call (a check's first call).")
    compiles: int | None = Field(None, description="Graphs compiled over all the grading's checks.")
    kernels: int | None = Field(None, description="Kernels Inductor generated for the learner's function (cost).")
    bytes: int | None = Field(None, description="Bytes moved as Inductor estimates them, plus eager ops outside.")
    duration_s: float = 0.0
    gpu_us: float | None = Field(None, description="Median GPU time per call, compiled, where measured.")


def _diagnostics(report: Report):
    yield from report.diagnostics
    for check in report.checks:
        yield from check.diagnostics


def facts_of(report: Report) -> Facts:
    """The facts of a stored report."""
    breaks: dict[tuple, BreakFact] = {}
    guards: dict[tuple, GuardFact] = {}
    recompiles = 0
    for diag in _diagnostics(report):
        if isinstance(diag, GraphBreakDiagnostic):
            line = diag.location.line if diag.location else None
            text = diag.location.text[:LINE_TEXT_CHARS] if diag.location else ""
            breaks.setdefault((diag.gb_id, line), BreakFact(gb_id=diag.gb_id, line=line, text=text))
        elif isinstance(diag, RecompileDiagnostic):
            recompiles = max(recompiles, diag.compiles - 1)
            origin = diag.origin
            for guard in diag.guard_failures[:1] if origin is None else []:
                guards.setdefault((guard, None), GuardFact(guard=guard))
            if origin is not None:
                line = origin.location.line if origin.location else None
                guards.setdefault((origin.guard, line), GuardFact(guard=origin.guard, line=line))
    graphs = compiles = None
    compiler = report.compiler
    if compiler is not None:
        # Each check compiles afresh (and again for new sizes): what one call makes is a first call's count.
        graphs = max((event.compiled for event in compiler.timeline if event.call == 1), default=0)
        compiles = len(compiler.graphs)
        recompiles = max(recompiles, len(compiler.recompiles))
        for origin in compiler.origins:
            line = origin.location.line if origin.location else None
            guards.setdefault((origin.guard, line), GuardFact(guard=origin.guard, line=line))
    kernels = nbytes = gpu_us = None
    mine = report.cost.of("learner") if report.cost else None
    if mine is not None and mine.compiled is not None:
        kernels, nbytes = len(mine.compiled.kernels), mine.compiled.bytes
    if mine is not None and mine.compiled_time is not None:
        gpu_us = mine.compiled_time.median_us
    return Facts(verdict=report.verdict.value, checks_passed=sum(c.passed for c in report.checks),
                 checks=len(report.checks), breaks=list(breaks.values())[:LISTED], recompiles=recompiles,
                 guards=list(guards.values())[:LISTED], graphs=graphs, compiles=compiles, kernels=kernels, bytes=nbytes,
                 duration_s=round(report.duration_s, 2), gpu_us=gpu_us)
