"""The cost section of real gradings: decided by the verifier, the same on every grading of the same file, pinned
for the torch it was measured on, and deaf to whatever the learner's process says or patches."""

from pathlib import Path

import pytest

from judge.parent.exercise import load_exercise
from judge.parent.grading import grade
from judge.reports.report import Verdict
from judge.shared.paths import EXERCISES_DIR

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent / "submissions"
EXERCISE = "fuse-rmsnorm-silu"
PINNED_TORCH = "2.13.0"
# fuse-rmsnorm-silu on x [8, 64] float32, w [64] (its [cost]): who -> (eager ops, eager bytes, kernels, extern calls,
# Inductor's estimate in bytes, operators run eagerly outside the graphs, their bytes).
PINNED = {
    "learner": (7, 18880, ["cpp_fused_add_mean_mul_pow_rsqrt_silu_0"], [], 4352, 0, 0),
    "reference": (7, 18880, ["cpp_fused_add_mean_mul_pow_rsqrt_silu_0"], [], 4352, 0, 0),
    "starter": (7, 18880, ["cpp_fused_silu_0"], [], 4096, 6, 14784),
}


@pytest.fixture(scope="module")
def reports(local):
    exercise = load_exercise(EXERCISES_DIR / EXERCISE)
    reference = exercise.read(exercise.reference)
    made = {"first": grade(exercise, reference, sandbox=local), "again": grade(exercise, reference, sandbox=local),
            "liar": grade(exercise, (HERE / "lying_about_cost.py").read_text(encoding="utf-8"), sandbox=local)}
    for name in ("first", "again"):
        assert made[name].verdict is Verdict.ACCEPTED, (name, made[name].summary, made[name].stderr[-2000:])
        assert made[name].cost is not None, (name, made[name].stderr[-2000:])
    # The runner imports judge.costs.measure (its compile records figures), so its tamper check sees the patch as well.
    liar = made["liar"]
    assert liar.verdict is Verdict.FORBIDDEN and "judge.costs.measure" in liar.summary, liar.summary
    return made


def figures(report) -> dict:
    return {f.who: (f.eager.ops, f.eager.bytes, f.compiled.kernels, f.compiled.extern_calls,
                    f.compiled.bytes_estimate, f.compiled.eager_ops_outside, f.compiled.eager_bytes_outside)
            for f in report.cost.figures}


def counted(section) -> dict:
    """The section without the seconds compiling took (shown, never deciding: they differ between gradings)."""
    return section.model_dump(exclude={"figures": {"__all__": {"compiled": {"compile": {"dynamo_s", "inductor_s"}}}}})


def test_two_gradings_of_the_same_file_give_the_same_figures(reports):
    assert counted(reports["first"].cost) == counted(reports["again"].cost)


def test_a_lying_runner_changes_nothing_in_the_cost_section(reports):
    """Its graph is the reference's; everything else it did stayed in its own process."""
    assert reports["liar"].cost is None or counted(reports["liar"].cost) == counted(reports["first"].cost)


def test_compiling_is_counted_here_for_the_reference_and_the_starter_only(reports):
    """Dynamo's frames and guards of the reference and the starter are counted in the verifier; the learner's function
    was traced in its own process, so its figures hold the graphs and Inductor's seconds here, nothing it reported."""
    cost = reports["first"].cost
    mine, reference, starter = cost.of("learner"), cost.of("reference"), cost.of("starter")
    assert mine.compiled.compile.frames is None and mine.compiled.compile.guards is None
    assert reference.compiled.compile.frames == 1 and reference.compiled.compile.guards > 0
    assert starter.compiled.compile.frames == 2  # the frame the disabled norm breaks, and the one resuming after it


def test_figures_pinned_for_this_torch(reports):
    cost = reports["first"].cost
    if not cost.torch_version.startswith(PINNED_TORCH):
        pytest.skip(f"figures pinned for torch {PINNED_TORCH}; measured on {cost.torch_version}")
    assert cost.inputs == "x: float32[8, 64], w: float32[64]"
    assert figures(reports["first"]) == PINNED, (
        f"torch {cost.torch_version} changed fuse-rmsnorm-silu's cost figures (eager ATen ops and bytes, Inductor's "
        f"kernels and byte estimate): update PINNED here and the figures quoted in docs/cost.md if the new ones are "
        f"right")


def test_an_exercise_without_cost_inputs_has_no_cost_section(add_one, local):
    report = grade(add_one, add_one.read(add_one.reference), sandbox=local)
    assert report.cost is None
