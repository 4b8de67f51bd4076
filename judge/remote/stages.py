"""Your code or the compiler, on the verifier's side: a captured graph's mismatching result run again, stage by stage.

A hidden test's `assert_same` failed on a result a captured graph computed here (`WrongAnswer.compared`, and the
grading's `last_run`: the graph, its inputs for that call, its outputs). The graph ran under the check's own stage
(op by op, or compiled with `local_backend`); each stage before that one (judge/verifier_side/stages.py: eager,
aot_eager,
aot_eager_decomp_partition, inductor) runs it again, sealed, on copies of the same inputs, and its result goes
through the same comparison. The first that disagrees is the finding; compiler_bisector narrows a compiler stage
further. Only the verifier's own rebuilt graph and inputs are used: the runner is asked nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch
import torch.fx
import torch.utils._pytree as pytree

from judge.checks.failures import CheckFailure
from judge.checks.sealed import run_sealed
from judge.remote.compiled import LastRun
from judge.remote.context import current
from judge.reports.report import StageFinding
from judge.shared import phases
from judge.verifier_side import stages


def explain(exc: BaseException) -> StageFinding | None:
    """The stage that first changes the numbers of the failed comparison in `exc`, or None where the mismatch is not
    a result of the last graph run here (or a stage could not run)."""
    compared = getattr(exc, "compared", None)
    context = current()
    run = context.last_run
    if compared is None or not isinstance(run, LastRun):
        return None
    leaves, spec = pytree.tree_flatten(compared.actual)
    positions = {id(t): i for i, t in enumerate(run.flat) if isinstance(t, torch.Tensor)}
    at = [positions.get(id(leaf)) if isinstance(leaf, torch.Tensor) else None for leaf in leaves]
    backend = run.compiled.local_backend
    failed = "eager" if backend is None else backend if backend in stages.STAGES else None
    if failed is None or all(p is None for p in at):
        return None

    def agrees_output(flat: tuple) -> bool:
        return compared.agrees(pytree.tree_unflatten([flat[p] if p is not None else leaf
                                                      for p, leaf in zip(at, leaves)], spec))

    return locate(run, agrees_output, failed)


def locate(run: LastRun, agrees_output: Callable[[tuple], bool], failed: str) -> StageFinding | None:
    """The first stage (up to `failed`, known to disagree) whose outputs for `run`'s graph and inputs do not pass
    `agrees_output`, narrowed by compiler_bisector (once per grading); None where a stage could not run here."""
    context = current()

    def agrees(stage: str) -> bool:
        return agrees_output(rerun(run, stage))

    try:
        with phases.span("verifier.stages"):
            stage, agreed = stages.first_disagreeing(agrees, failed)
            subsystem, detail = "", ""
            if stage in stages.NARROWED and not context.narrowed:
                context.narrowed = True  # compiler_bisector runs once per grading, on its first such mismatch
                subsystem, detail = stages.narrow(stage, lambda: agrees(stage))
    except (CheckFailure, Exception):  # noqa: BLE001 - a stage that cannot run here: no finding, never a verdict
        return None
    return stages.finding(stage, agreed, subsystem, detail)


def rerun(run: LastRun, stage: str) -> tuple:
    """The graph of `run` under `stage` (compiled afresh, sealed) on copies of its inputs: its outputs."""
    compiled = run.compiled
    gm = compiled.graphs[run.index].gm
    names, mutable = compiled.input_names(run.index)
    # a graph module of its own for every compile: Dynamo's cache of the last one is never reused
    fn = gm if stage == "eager" else torch.compile(torch.fx.GraphModule(gm, copy.deepcopy(gm.graph)), backend=stage)
    flat = run_sealed(fn, copy.deepcopy(run.values), what=compiled.what, mutable=mutable, names=names)
    return tuple(flat) if isinstance(flat, (list, tuple)) else (flat,)
