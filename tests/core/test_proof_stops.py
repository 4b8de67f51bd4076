"""A proof of a solution pinned to fail stops at its first failing check; a learner's grading runs every check."""


from judge.parent import proving
from judge.parent.grading import grade
from judge.reports.report import Verdict

WRONG = "import torch\n\n\ndef f(x):\n    return x + 2\n"


def test_the_verifier_stops_at_the_first_failing_check_only_when_asked(add_one, local):
    every = grade(add_one, WRONG, sandbox=local)
    first = grade(add_one, WRONG, sandbox=local, stop_after_first_failure=True)
    assert every.verdict is first.verdict is Verdict.WRONG_ANSWER
    names = [c.name for c in every.checks]
    failing = every.first_failure().name
    assert failing == first.first_failure().name == "test_values"
    assert names.index(failing) < len(names) - 1, "the fake course must have a check after the failing one"
    assert [c.name for c in first.checks] == names[:names.index(failing) + 1]


def test_an_honest_solution_runs_every_check_even_when_asked_to_stop(add_one, local):
    every = grade(add_one, "import torch\n\n\ndef f(x):\n    return x + 1\n", sandbox=local,
                  stop_after_first_failure=True)
    assert every.verdict is Verdict.ACCEPTED and len(every.checks) >= 3


def test_prove_stops_early_for_the_starter_and_wrong_solutions_only(add_one, monkeypatch, local):
    asked = {}

    def fake_grade(exercise, source, *, sandbox=None, filename="", stop_after_first_failure=False, seed=None):
        asked[filename] = stop_after_first_failure
        return grade(exercise, source, sandbox=sandbox, filename=filename,
                     stop_after_first_failure=stop_after_first_failure, seed=seed)

    monkeypatch.setattr(proving, "grade", fake_grade)
    proofs = proving.prove(add_one, sandbox=local)
    assert all(p.ok for p in proofs), [p.problem() for p in proofs]
    assert asked == {"reference.py": False, "starter.py": True, "add_two.py": True}
