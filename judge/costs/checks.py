"""Checks on what compiling bought: bytes moved, kernels generated, time, against the reference.

    learner = learner_cost(entry, x, w)            # the learner's graph, rebuilt and measured here
    reference = function_cost(reference.block, x, w)
    assert_bytes_at_most(learner, reference)       # Inductor's estimate, compiled: at most the reference's
    assert_kernels_at_most(learner, reference)

Figures come from judge/costs/measure.py, measured in this process on graphs it rebuilt; the runner only ever sends a
graph. Bytes are Inductor's estimate (`torch._inductor.metrics.num_bytes_accessed`) plus what ran eagerly after a
graph break; time is measured on a GPU only (`timed_cost`; a learner's graph through `learner_timed_cost`,
sealed). Each failure names both figures and what to try.
"""

from __future__ import annotations

import torch

from judge import remote
from judge.checks.failures import WrongAnswer
from judge.checks.sealed import run_sealed
from judge.costs.measure import cost_of, measure_time
from judge.reports.i18n import T
from judge.reports.report import CostFigures, GraphDiagnostic, TimedCost


def learner_cost(entry, *args, mode: str = "default", what=None) -> CostFigures:
    """The learner's `entry` compiled in the runner (fullgraph) on inputs like `args`; its graph rebuilt and
    measured here on `args`: eager ATen ops and bytes, Inductor's kernels and byte estimate."""
    compiled = entry.compile(fullgraph=True, what=what or remote.YOUR_FUNCTION)
    compiled(*args)
    index = compiled.calls[-1].graph
    gm, values = compiled.graphs[index].gm, compiled.inputs_for(index, *args)
    # sealed, as every run of a returned graph: measuring it cannot change this process (judge.checks.sealed)
    eager, compiled_figures = run_sealed(lambda *copies: cost_of(gm, list(copies), mode=mode), list(values),
                                         what=what or remote.YOUR_FUNCTION, mutable=range(len(values)))
    return CostFigures(who="learner", eager=eager, compiled=compiled_figures)


def function_cost(fn, *args, who: str = "reference", mode: str = "default") -> CostFigures:
    """The same figures for a function of the exercise's own (the reference, the starter), run here."""
    eager, compiled = cost_of(fn, args, mode=mode)
    return CostFigures(who=who, eager=eager, compiled=compiled)


def _kib(n: int) -> str:
    from judge.costs.view import human_bytes  # the one rule every front-end shows byte counts by

    return human_bytes(n)


def _kernels(figures: CostFigures) -> GraphDiagnostic:
    c = figures.compiled
    listed = "\n".join(c.kernels + [f"{name}  (extern)" for name in c.extern_calls]) or "(none)"
    return GraphDiagnostic(title=T("what Inductor generated for your graph"), code=listed,
                           highlight=c.extern_calls)


def assert_bytes_at_most(learner: CostFigures, reference: CostFigures, *, factor: float = 1.0,
                         slack_bytes: int = 0) -> None:
    """Fail (WRONG_ANSWER) if the learner's compiled graph moves more than `factor` times the reference's bytes
    (plus `slack_bytes`), by Inductor's estimate."""
    mine, theirs = learner.compiled.bytes, reference.compiled.bytes
    limit = theirs * factor + slack_bytes
    if mine <= limit:
        return
    raise WrongAnswer(T(
        "compiled, your graph moves {mine} (Inductor's estimate of the bytes its kernels read and write), the "
        "reference's {theirs}: at most {limit} is allowed. Each kernel reads its inputs from memory and writes its "
        "result back; a value computed in one kernel and read again by another, or an input read in two passes, "
        "costs a round trip. Compute what a row needs in one pass and let Inductor fuse it.",
        mine=_kib(mine), theirs=_kib(theirs), limit=_kib(int(limit))), [_kernels(learner)])


def assert_kernels_at_most(learner: CostFigures, reference: CostFigures, *, extra: int = 0) -> None:
    """Fail (WRONG_ANSWER) if Inductor generated more kernels (and extern calls) for the learner's graph than for
    the reference's, plus `extra`."""
    mine = len(learner.compiled.kernels) + len(learner.compiled.extern_calls)
    theirs = len(reference.compiled.kernels) + len(reference.compiled.extern_calls)
    if mine <= theirs + extra:
        return
    raise WrongAnswer(T(
        "Inductor made {mine} kernels and extern calls of your graph, {theirs} of the reference's (at most {limit} "
        "allowed). Every kernel boundary is a write to memory and a read back: look at what stops fusion (a "
        "reduction whose result is used in a second pass, a matmul, an op Inductor cannot generate) and write it "
        "so that it fuses.", mine=mine, theirs=theirs, limit=theirs + extra), [_kernels(learner)])


def timed_cost(fn, make_args, *, mode: str = "default", cpu_per_step: bool = False,
               time_cap_s: float = 3.0) -> TimedCost:
    """`fn` compiled with `mode` here, timed on the GPU (judge.costs.measure.measure_time: fresh inputs per batch, L2
    flushed, warm-up, repeats to a relative-standard-error bound or a time cap; compile time apart)."""
    torch._dynamo.reset()
    options = {"mode": mode} if mode != "default" else {}
    with torch.no_grad():
        return measure_time(torch.compile(fn, **options), make_args, cpu_per_step=cpu_per_step,
                            time_cap_s=time_cap_s)


def learner_timed_cost(gm: torch.fx.GraphModule, values: list, *, mode: str = "default", cpu_per_step: bool = False,
                       time_cap_s: float = 3.0, what=None) -> TimedCost:
    """`timed_cost` of the learner's graph `gm` (rebuilt here) on `values`, sealed as every run of a returned graph
    (judge.checks.sealed): compiled and timed on copies, each timed batch on fresh clones of them, and the
    verifier's process state checked afterwards, so that timing it cannot change what later checks see."""
    def timed(*copies):
        return timed_cost(gm, lambda: [v.clone() if isinstance(v, torch.Tensor) else v for v in copies], mode=mode,
                          cpu_per_step=cpu_per_step, time_cap_s=time_cap_s)

    return run_sealed(timed, list(values), what=what or remote.YOUR_FUNCTION, mutable=range(len(values)))


def assert_time_at_most(mine: TimedCost, reference: TimedCost, *, factor: float, what: str = "gpu") -> None:
    """Fail (WRONG_ANSWER) if the learner's time (`what`: "gpu" per call, or "cpu" per step) is over `factor`
    times the reference's. Pick `factor` wide enough for a noisy machine (the method's spread is in the report)."""
    if what == "cpu":
        a, b = mine.cpu_us_per_step, reference.cpu_us_per_step
    else:
        a, b = mine.median_us, reference.median_us
    if a is None or b is None or a <= b * factor:
        return
    if what == "cpu":
        raise WrongAnswer(T(
            "each step of your compiled function takes {mine} µs of CPU time to issue, the reference's {theirs} µs "
            "(at most {factor}x allowed). That CPU time is launching kernels one by one: with "
            "`mode=\"reduce-overhead\"` a step that CUDA graphs can record is replayed with one launch. Look for "
            "what keeps the step out of a CUDA graph (a CPU tensor, a copy to the host, an input updated in place, "
            "a graph break).", mine=f"{a:.1f}", theirs=f"{b:.1f}", factor=format(factor, "g")))
    raise WrongAnswer(T(
        "your compiled function takes {mine} µs per call on the GPU (median, ±{spread}), the reference's {theirs} µs "
        "(at most {factor}x allowed). Count the kernels and the bytes in the report's cost section: fewer passes "
        "over memory is what makes it faster.", mine=f"{a:.1f}", spread=f"{mine.spread_us:.1f}",
        theirs=f"{b:.1f}", factor=format(factor, "g")))
