"""Every shipped exercise proves itself: the reference and every correct form pass, the starter and each
wrong solution get exactly the verdict (and failing check) they are pinned to.

One test per solution, so pytest-xdist spreads them; all but the book exercise's reference and starter are
marked slow (the quick subset: `pytest -m "not slow"`).
"""

from pathlib import Path

import pytest

from judge.exercise import load_course
from judge.grading import grade, make_sandbox
from judge.proving import Proof, cases

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"
QUICK = {("graph-break-step", "reference"), ("graph-break-step", "starter")}


def _params():
    params = []
    for exercise in load_course(EXERCISES):
        for kind, path, verdict, check in cases(exercise):
            marks = [] if (exercise.id, kind) in QUICK else [pytest.mark.slow]
            params.append(pytest.param(exercise, kind, path, verdict, check, marks=marks,
                                       id=f"{exercise.id}:{path}"))
    return params


@pytest.fixture(scope="module")
def warm():
    """One warm local runner and verifier for every proof of this process (a fork per grading)."""
    sandbox = make_sandbox("local")
    yield sandbox
    sandbox.close()


@pytest.mark.parametrize("exercise, kind, path, verdict, check", _params())
def test_solution_gets_its_pinned_verdict(exercise, kind, path, verdict, check, warm):
    report = grade(exercise, exercise.read(path), filename=Path(path).name, sandbox=warm)
    proof = Proof(kind, path, verdict, check, report)
    assert proof.ok, proof.problem()


def test_every_exercise_pins_enough_wrong_solutions():
    for exercise in load_course(EXERCISES):
        minimum = 6 if exercise.id == "graph-break-step" else 3
        assert len(exercise.wrong) >= minimum, f"{exercise.id} pins {len(exercise.wrong)} wrong solutions"
        assert exercise.hints, f"{exercise.id} has no hints"
