"""Your code or the compiler? On a mismatch, the stage of torch.compile that first changes the numbers.

PyTorch's own advice for a compiled result that differs from eager is to run it again under each backend in turn
(eager, aot_eager, aot_eager_decomp_partition, inductor) and to name the first that disagrees; within that stage,
`torch._inductor.compiler_bisector` narrows it to a subsystem (a pass, the decompositions, the lowerings) and, for
the subsystems applied once per operator or pass, to the one application that changes the result. This module
holds that order, drives the bisector from the stage found, and words the finding; the verifier's side
(judge/remote/stages.py and judge/verifier_side/playground.py) runs the learner's captured graph, sealed, on copies.

The stage `eager` is Dynamo's captured graph run op by op: where it already disagrees, the learner's function itself
computes these numbers. Nothing here runs on a passing grading: only a mismatch asks.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import tempfile
import time
from collections.abc import Callable

from judge.reports.i18n import T, in_code
from judge.reports.report import StageFinding

STAGES = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")
# The stages compiler_bisector can narrow further (torch/_inductor/compiler_bisector.py: BACKENDS, torch 2.13).
NARROWED = ("aot_eager_decomp_partition", "inductor")
NARROW_SECONDS = 40.0  # the most one grading spends in compiler_bisector (wall clock), on a mismatch only

# What a subsystem is, in the learner's words (`detail`: the operator or pass the bisector named, as code).
SUBSYSTEMS: dict[str, Callable[[str], T]] = {
    "decomposition": lambda detail: T("the decomposition of `{detail}`", detail=detail),
    "pre_grad_passes": lambda detail: T("Inductor's pre-grad pass `{detail}`", detail=detail),
    "joint_graph_passes": lambda detail: T("Inductor's joint-graph pass `{detail}`", detail=detail),
    "post_grad_passes": lambda detail: T("Inductor's post-grad pass `{detail}`", detail=detail),
    "lowerings": lambda detail: T("Inductor's lowering of `{detail}`", detail=detail),
}


class _OutOfTime(Exception):
    """The bisector ran past its time: its finding so far is the stage alone."""


def first_disagreeing(agrees: Callable[[str], bool], failed: str) -> tuple[str, list[str]]:
    """(the first stage that disagrees, the stages before it that agree): each stage before `failed` (the one whose
    result mismatched, known to disagree) is run through `agrees(stage)`, in order."""
    agreed: list[str] = []
    for stage in STAGES[:STAGES.index(failed)]:
        if not agrees(stage):
            return stage, agreed
        agreed.append(stage)
    return failed, agreed


def narrow(stage: str, agrees: Callable[[], bool], seconds: float = NARROW_SECONDS) -> tuple[str, str]:
    """(subsystem, what within it) of `stage` that changes the result, found by torch's compiler_bisector, or
    ("", "") where it finds none or runs past `seconds`. `agrees()` compiles the graph afresh with
    `torch.compile(..., backend=<any>)` (the bisector sets the backend) and says whether its result agrees."""
    from torch._inductor import compiler_bisector as cb

    if stage not in NARROWED or not cb.BACKENDS.get(stage):
        return "", ""
    bisector = cb.CompilerBisector
    deadline = time.monotonic() + seconds

    def timed() -> bool:
        if time.monotonic() > deadline:
            raise _OutOfTime
        return agrees()

    saved = bisector.bisection_enabled, bisector.in_process_cache
    folder = tempfile.mkdtemp(prefix="practice-bisect-")
    bisector.bisection_enabled, bisector.in_process_cache = True, folder
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the bisector prints its progress
            first = cb.BACKENDS[stage][0]
            bisector.update_bisect_status(stage, first.name)
            bisector.update_run_state(stage, first, "test_disable")
            if not bisector.process_subsystem(stage, first, timed, cli_interface=False):
                return "", ""
            name = bisector.get_subsystem() or ""
            found = bisector.get_subsystem_object(stage, name)
            if isinstance(found, cb.ConfigChange):
                return name, f"{found.config_name}.{found.config_field} = {found.config_value!r}"
            if isinstance(found, cb.BinarySubsystem):
                return name, ""
            low, _ = bisector.get_bisect_range(stage, name)
            return name, str(bisector.get_call_counter_debug_info(stage, name, low) or "")[:200]
    except Exception:  # noqa: BLE001 - out of time, or the bisector's own failure: the stage alone is the finding
        return "", ""
    finally:
        bisector.bisection_enabled, bisector.in_process_cache = saved
        cb.subsystem_call_counter.clear()
        shutil.rmtree(folder, ignore_errors=True)


def _shown(subsystem: str, detail: str) -> str:
    """The operator or pass the bisector named, as shown: a lowered node's name without its counter (`mul_1`:
    `mul`)."""
    if subsystem == "lowerings":
        return re.sub(r"_\d+$", "", detail)
    return detail


def explanation(stage: str, subsystem: str = "", detail: str = "") -> T:
    """The finding in words: the learner's own code, or the compiler stage (and what in it) that changes the
    numbers."""
    if stage == "eager":
        return T("Your code or the compiler? Your function itself computes this: the graph Dynamo captured from your "
                 "code, run op by op with no compiler stage, already gives these numbers.")
    words = {
        "aot_eager": T("AOTAutograd's tracing (backend `aot_eager`)"),
        "aot_eager_decomp_partition": T("AOTAutograd's decompositions and partitioning (backend "
                                        "`aot_eager_decomp_partition`)"),
        "inductor": T("Inductor"),
    }[stage]
    if subsystem in SUBSYSTEMS and detail:
        words = SUBSYSTEMS[subsystem](in_code(_shown(subsystem, detail), 120))
    elif subsystem.startswith(stage + "_") and detail:  # a config change that made the numbers agree
        return T("Your code or the compiler? The compiler: {stage} changes the numbers here, and setting `{setting}` "
                 "makes them agree; the graph captured from your code, run op by op, gives the expected result.",
                 stage=words, setting=in_code(detail))
    elif subsystem:
        words = T("{stage} (its subsystem `{subsystem}`)", stage=words, subsystem=in_code(subsystem))
    return T("Your code or the compiler? The compiler: {stage} changes the numbers here; the graph captured from "
             "your code, run op by op, gives the expected result.", stage=words)


def finding(stage: str, agreed: list[str], subsystem: str = "", detail: str = "") -> StageFinding:
    """The report's finding (judge.reports.report.StageFinding)."""
    return StageFinding(stage=stage, agreed=list(agreed), subsystem=subsystem, detail=detail,
                        explanation=explanation(stage, subsystem, detail))
