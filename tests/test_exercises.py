"""Every shipped exercise proves itself: the reference and every correct form pass, the starter and each
wrong solution get exactly the verdict (and failing check) they are pinned to, and each report reads entirely
in Chinese and entirely in English.

Each CPU exercise's solutions are graded through the background judge (cli/daemon*.py), as `python
practice/judge.py` grades them for a learner: one proof shows both that the pinned verdict holds and that the daemon
gives it (its warm `local` forks run the one `grade()`), so the course is graded once per run, not once in this
process and again through a daemon. Exercises that need a CUDA GPU are graded in fresh processes (never forked)
and skipped, with that reason, where torch sees none.

One test per solution, so pytest-xdist spreads them; the file is the proofs lane (tests/lanes.py), and all but the
book exercise's reference and starter are also marked slow (`pytest -m "not slow"` keeps those two).
"""

import importlib.util
from pathlib import Path

import pytest
import torch

from cli import daemon
from judge.parent.exercise import load_course, load_exercise
from judge.parent.grading import grade, make_sandbox
from judge.parent.proving import Proof, cases, expected_break, graded, proven_here, seed_for
from judge.parent.requirements import backend_for
from judge.shared import draw
from tests.daemons import running_daemon

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"
QUICK = {("graph-break-step", "reference"), ("graph-break-step", "starter")}


def _params():
    params = []
    for exercise in load_course(EXERCISES):
        for kind, path, verdict, check in cases(exercise):
            marks = [] if (exercise.id, kind) in QUICK else [pytest.mark.slow]
            if exercise.needs_cuda:  # proven on a GPU machine (practice prove there); skipped elsewhere, with why
                # (what its CPU tier decides is proven on every machine: test_the_cpu_tier_gets_its_pinned_verdict)
                marks.append(pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"))
            params.append(pytest.param(exercise, kind, path, verdict, check, marks=marks,
                                       id=f"{exercise.id}:{path}"))
    return params


@pytest.fixture(scope="module")
def course_daemon(tmp_path_factory):
    with running_daemon(tmp_path_factory.mktemp("daemon")) as settings:
        yield settings


def _graded(exercise, kind, path, course_daemon):
    """The report of `path` as its proof grades it: through the daemon, or fresh for a GPU exercise."""
    stop = kind in ("starter", "wrong")  # as `practice prove` proves it
    if backend_for(exercise, "local") != "local":  # a GPU exercise: fresh processes, never forks, after its CPU tier
        return graded(exercise, kind, path, sandbox=make_sandbox("none"))
    # The daemon loads the exercise from its folder and draws under the suite's secret, which is the proofs' one
    # (tests/conftest.py): the same seed as seed_for(exercise, path).
    report = daemon.grade(daemon.connect(course_daemon), load_exercise(exercise.root), exercise.read(path),
                          Path(path).name, None, course_daemon, stop_after_first_failure=stop)
    assert report.sandbox.startswith("local") and report.seed == seed_for(exercise, path)
    return report


@pytest.mark.parametrize("exercise, kind, path, verdict, check", _params())
def test_solution_gets_its_pinned_verdict(exercise, kind, path, verdict, check, course_daemon):
    report = _graded(exercise, kind, path, course_daemon)
    proof = Proof(kind, path, verdict, check, report, expected_break(exercise, path), not exercise.needs_cuda)
    # The pinned verdict (and graph-break registry id), and everything the learner reads of the report in Chinese and
    # in English (a failing proof's first failure; an accepted one's every check title).
    assert proof.ok, proof.problem()


def _cpu_tier_params():
    """The proofs of every GPU exercise that its CPU tier decides, proven on any machine (no CUDA needed)."""
    return [pytest.param(exercise, kind, path, verdict, check, id=f"{exercise.id}:{path}",
                         marks=[pytest.mark.skipif(importlib.util.find_spec("triton") is None and "import triton" in
                                                   exercise.read(path), reason="needs the `triton` extra")])
            for exercise in load_course(EXERCISES) if exercise.needs_cuda
            for kind, path, verdict, check in cases(exercise) if proven_here(exercise, kind, path, gpu_here=False)]


@pytest.mark.parametrize("exercise, kind, path, verdict, check", _cpu_tier_params())
def test_the_cpu_tier_gets_its_pinned_verdict(exercise, kind, path, verdict, check, local):
    # A correct file passes the CPU tier and is told it waits for a GPU; a wrong one pinned with tier = "cpu" gets
    # its pinned verdict and check there, in seconds (judge/shared/tiers.py), with no CUDA device.
    report = graded(exercise, kind, path, cpu_sandbox=local, gpu_here=False)
    proof = Proof(kind, path, verdict, check, report, expected_break(exercise, path), False)
    assert report.tier == "cpu" and proof.ok, proof.problem()
    if verdict.value == "ACCEPTED":
        assert "waits for a CUDA GPU" in report.summary and "等待" in report.translations["zh"]["summary"]


def test_every_exercise_pins_enough_wrong_solutions():
    for exercise in load_course(EXERCISES):
        # Issue 14's audit: every CPU exercise pins at least six wrong solutions more than the first course had
        minimum = 4 if exercise.needs_cuda else 11
        assert len(exercise.wrong) >= minimum, f"{exercise.id} pins {len(exercise.wrong)} wrong solutions"
        assert exercise.hints, f"{exercise.id} has no hints"


def test_a_contract_search_records_its_seed_and_budget_passed_or_not(local):
    exercise = next(e for e in load_course(EXERCISES) if e.id == "graph-break-step")
    budget = exercise.contract.examples
    passed = grade(exercise, exercise.read(exercise.reference), sandbox=local)
    search = next(c for c in passed.checks if c.name == "test_contract_search")
    # The search is drawn with the grading (judge/shared/draw.py): its seed is the grading's contract stream.
    seed = draw.stream(passed.seed, f"contract {exercise.contract.seed}")
    assert search.passed and search.properties == {"seed": seed, "examples": budget, "tried": budget}
    failed = grade(exercise, exercise.read("wrong/eps_threshold.py"), sandbox=local)
    search = failed.first_failure()
    seed = draw.stream(failed.seed, f"contract {exercise.contract.seed}")
    assert search.name == "test_contract_search" and search.properties == {"seed": seed, "examples": budget}
    assert f"seed {seed}" in search.message and "种子" in search.translations["zh"]["message"]


def test_a_report_shows_what_the_compiler_made_of_the_code(local):
    exercise = next(e for e in load_course(EXERCISES) if e.id == "graph-break-step")
    view = grade(exercise, exercise.read("wrong/sign_scale.py"), sandbox=local).compiler
    first = view.graphs[0]
    assert "torch.sign" in first.code and "# File: solution.py:" in first.code and first.learner_lines
    assert "TREE_GUARD_MANAGER" in view.guards and view.kernels == []  # no Inductor in this exercise


@pytest.mark.slow
def test_an_inductor_exercises_report_shows_the_generated_code(local):
    exercise = next(e for e in load_course(EXERCISES) if e.id == "fuse-rmsnorm-silu")
    view = grade(exercise, exercise.read(exercise.reference), sandbox=local).compiler
    assert view.graphs and any("def call(" in code for code in view.kernels)
