"""Every shipped exercise proves itself: the reference and every correct form pass, the starter and each
wrong solution get exactly the verdict (and failing check) they are pinned to, and each report reads entirely
in Chinese and entirely in English.

One test per solution, so pytest-xdist spreads them; the file is the proofs lane (tests/lanes.py), and all but the
book exercise's reference and starter are also marked slow (`pytest -m "not slow"` keeps those two). Exercises
that need a CUDA GPU are skipped, with that reason, where torch sees none.
"""

from pathlib import Path

import pytest
import torch

from judge import draw
from judge.exercise import load_course
from judge.grading import grade, make_sandbox
from judge.proving import Proof, cases, expected_break, seed_for
from judge.requirements import backend_for

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"
QUICK = {("graph-break-step", "reference"), ("graph-break-step", "starter")}


def _params():
    params = []
    for exercise in load_course(EXERCISES):
        for kind, path, verdict, check in cases(exercise):
            marks = [] if (exercise.id, kind) in QUICK else [pytest.mark.slow]
            if exercise.needs_cuda:  # proven on a GPU machine (practice prove there); skipped elsewhere, with why
                marks.append(pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"))
            params.append(pytest.param(exercise, kind, path, verdict, check, marks=marks,
                                       id=f"{exercise.id}:{path}"))
    return params


@pytest.mark.parametrize("exercise, kind, path, verdict, check", _params())
def test_solution_gets_its_pinned_verdict(exercise, kind, path, verdict, check, local):
    fresh = backend_for(exercise, "local") != "local"  # a GPU exercise: fresh processes, never forks
    report = grade(exercise, exercise.read(path), filename=Path(path).name,
                   sandbox=make_sandbox("none") if fresh else local,
                   stop_after_first_failure=kind in ("starter", "wrong"),  # as `practice prove` proves it
                   seed=seed_for(exercise, path))
    proof = Proof(kind, path, verdict, check, report, expected_break(exercise, path), not exercise.needs_cuda)
    # The pinned verdict (and graph-break registry id), and everything the learner reads of the report in Chinese and
    # in English (a failing
    # proof's first failure; an accepted one's every check title).
    assert proof.ok, proof.problem()


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
    # The search is drawn with the grading (judge/draw.py): its seed is the grading's contract stream.
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
