"""Grading in tiers: a GPU exercise's CPU tier, a subset of its hidden tests graded first, on the CPU, anywhere.

An exercise that needs CUDA may declare `cpu_tier` in exercise.toml: the hidden tests (by function name, in the
order they run) that need no device. `grade(..., tier="cpu")` runs just those, by the same runner and verifier,
with every tensor of the tests on the CPU (the `device` the tests read through `judge.checks.grading_device`), no
CUDA device visible to either process and Triton's interpreter on (`TRITON_INTERPRET=1`: a learner's Triton kernel
runs on CPU tensors). It ends at its first failing check: a tier is a pre-check, its verdict is wanted at once.

Every front-end grades a GPU exercise as `grade_tiers` does: the CPU tier first; a failing file gets the CPU tier's
report as its verdict; a passing one goes on to the full grading on a GPU, whose report carries the CPU tier's
section (`Report.tiers`), or, where no GPU grades here, is told it passed the CPU tier and waits for one.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from judge.reports.i18n import T

CPU = "cpu"
TIERS = (CPU,)
# Triton's interpreter; Triton reads it when `triton.language` is imported (its own @jit helpers, tl.sum...).
INTERPRETER = {"TRITON_INTERPRET": "1"}
# What the CPU tier's processes see: no CUDA device (the same tier on every machine) and Triton's interpreter.
CPU_ENVIRONMENT = {"CUDA_VISIBLE_DEVICES": "", **INTERPRETER}


# A pre-check in seconds: the CPU tier's runner gets at most this long (a file that runs on holds a CPU grader, not
# a GPU one, but no longer than this); its verifier gets the usual margin on top (judge.parent.job.verifier_limits).
CPU_TIER_SECONDS = 60.0


def limits_for(limits, tier: str | None):
    """The runner's limits for `tier`: the exercise's, its time capped in the CPU tier."""
    if tier != CPU or limits.time_seconds <= CPU_TIER_SECONDS:
        return limits
    return limits.model_copy(update={"time_seconds": CPU_TIER_SECONDS})


def passed_cpu(checks: int) -> T:
    """The summary of a passed CPU tier: what it means, and that the GPU checks are still to come."""
    return T("Passed the CPU tier ({n} checks on the CPU, no GPU needed). The GPU checks are still to come: your file "
             "waits for a CUDA GPU.", n=checks)


CPU_TIER_PASSED = "CPU_TIER_PASSED"  # what a record of progress keeps of a passed CPU tier (never "solved")
PASSED_TITLE = T("Passed the CPU tier, waiting for a GPU")


def tier_line(section) -> T:
    """One line of a front-end about a tier graded before the report's own (a `judge.reports.report.TierSection`)."""
    return T("CPU tier: {verdict}, {n} checks on the CPU in {seconds:.1f} s", verdict=section.verdict.value,
             n=len(section.checks), seconds=section.duration_s)


def waits_for_gpu(report) -> bool:
    """A report of a passed CPU tier: its ACCEPTED is the tier's, the exercise is not solved yet."""
    return report.tier == CPU and report.accepted


def standing(report) -> str:
    """The verdict a record of progress keeps: the report's, or CPU_TIER_PASSED for a passed CPU tier."""
    return CPU_TIER_PASSED if waits_for_gpu(report) else report.verdict.value


def cpu_checks(exercise) -> list[str]:
    """The hidden tests of the exercise's CPU tier, in the order they run ([] when it declares none)."""
    return list(getattr(exercise, "cpu_tier", None) or [])


def has_cpu_tier(exercise) -> bool:
    return bool(cpu_checks(exercise))


def device_of(tier: str | None) -> str:
    """The device the hidden tests put their tensors on: the CPU in the CPU tier, else CUDA for a GPU exercise."""
    return "cpu" if tier == CPU else "cuda"


def enter(tier: str | None) -> None:
    """Set this process up for `tier` (the sandbox child calls it, for either role, first: CUDA has not started in
    a warm worker, which set the interpreter's variable before importing Triton (judge.child.prepare_worker))."""
    if tier == CPU:
        os.environ.update(CPU_ENVIRONMENT)


def selected(names: list[str], checks: list[str]) -> list[int]:
    """Indexes of the collected test `names` (`test_x[param]`) in the tier, ordered as `checks` lists them."""
    rank = {name: i for i, name in enumerate(checks)}
    chosen = [i for i, name in enumerate(names) if name.split("[", 1)[0] in rank]
    return sorted(chosen, key=lambda i: (rank[names[i].split("[", 1)[0]], i))


def grade_tiers(exercise, source: str, *, grade_cpu_tier: Callable, grade_full: Callable | None):
    """Grade `source` tier by tier: (report, waits_for_gpu). `grade_cpu_tier(source)` and `grade_full(source)` are
    the caller's `judge.grade` with its sandboxes bound (tier="cpu", and no tier); `grade_full` is None where no GPU
    grades here. A failing CPU tier's report is the verdict; a passing one goes on to the full grading, whose
    report carries the CPU tier's section in `tiers`, or, without a GPU here, is returned with waits_for_gpu."""
    from judge.reports.report import TierSection

    if not has_cpu_tier(exercise):
        return grade_full(source) if grade_full else None, False
    cpu = grade_cpu_tier(source)
    if not cpu.accepted or grade_full is None:
        return cpu, cpu.accepted
    full = grade_full(source)
    full.tiers = [TierSection.of(cpu), *full.tiers]
    return full, False
