"""What the trusted side sends into the sandbox: one job for the runner, one for the verifier.

The runner's job carries the learner's source and the exercise's public file only. The verifier's job
carries the hidden tests, the reference and the starter as text; it never carries the learner's source.
"""

from __future__ import annotations

from judge.costs.spec import spec_for as cost_spec_for
from judge.parent.exercise import Exercise
from judge.reports.i18n import T
from judge.shared.jobs import RunnerJob, VerifierJob
from judge.shared.tiers import cpu_checks, limits_for
from sandbox.limits import Limits

# The verifier waits on the runner: it gets the runner's time plus this much, and more CPU and memory.
# The largest learner file graded or run, in UTF-8 bytes: grade(), the playground and every front-end's own check
# (the web's request bodies) read it here, so that nothing accepts a file that grading then refuses.
MAX_SOURCE_BYTES = 64 * 1024
VERIFIER_EXTRA_SECONDS = 60.0
VERIFIER_TIME_FACTOR = 1.5


def source_too_large(source: str):
    """Why `source` is refused before anything runs (a `T`: it is larger than `MAX_SOURCE_BYTES`), or None."""
    if len(source.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES:
        return T("Your file is larger than {kib} KiB; shorten it.", kib=MAX_SOURCE_BYTES // 1024)
    return None


def make_jobs(exercise: Exercise, source: str, filename: str = "solution.py", stop_after_first_failure: bool = False,
              measure_cost: bool | None = None, seed: int = 0,
              tier: str | None = None, reuse_compiled: bool = True) -> tuple[RunnerJob, VerifierJob]:
    """The two jobs of one grading. `measure_cost`: None measures the cost section where the exercise has a
    [cost] table; True also where it has none but a [contract] to take inputs from (judge.costs.spec.spec_for)."""
    public = exercise.read(exercise.public) if exercise.public else None
    rels = set(exercise.test_files()) | {exercise.reference, exercise.starter}
    # Helper modules beside the tests (tests/_*.py) travel to the verifier too.
    rels |= {p.relative_to(exercise.root).as_posix() for p in (exercise.root / "tests").glob("*.py")}
    runner = RunnerJob(entry_point=exercise.entry_point, source=source, filename=filename, public=public,
                       op_namespaces=exercise.op_namespaces, build_process=exercise.build_process, tier=tier)
    verifier = VerifierJob(exercise_id=exercise.id, entry_point=exercise.entry_point, filename=filename,
                           files={rel: exercise.read(rel) for rel in sorted(rels)}, tests=exercise.test_files(),
                           reference=exercise.reference, starter=exercise.starter, public=public,
                           op_namespaces=exercise.op_namespaces,
                           runner_seconds=limits_for(exercise.limits, tier).wall_limit,
                           contract=exercise.contract.model_dump(mode="json") if exercise.contract else None,
                           stop_after_first_failure=stop_after_first_failure or tier is not None, seed=seed,
                           tier=tier, tier_checks=cpu_checks(exercise) if tier else [],
                           reuse_compiled=reuse_compiled)
    spec = cost_spec_for(exercise, measure_cost)
    if spec is not None and tier is None:  # a tier's pre-check measures no cost
        from judge.costs import memo as cost_memo

        verifier.cost = spec.model_dump(mode="json")
        verifier.cost_known = cost_memo.known(exercise, verifier.cost)
    return runner, verifier


def verifier_limits(limits: Limits) -> Limits:
    """The verifier's limits: it waits for the runner, so it gets more time than the runner has."""
    return limits.scaled(VERIFIER_TIME_FACTOR, VERIFIER_EXTRA_SECONDS).model_copy(
        update={"memory_mb": max(limits.memory_mb, 2048), "output_kb": max(limits.output_kb, 256)})
