"""Prove an exercise: the reference passes, the starter fails as pinned, each wrong solution fails as pinned."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from judge.exercise import Exercise
from judge.grading import grade
from judge.report import Report, Verdict


@dataclass
class Proof:
    """One solution graded against its expectation."""

    kind: str  # "reference", "solution", "starter" or "wrong"
    path: str
    expected: Verdict
    expected_check: str | None
    report: Report

    @property
    def failing_check(self) -> str | None:
        failure = self.report.first_failure()
        return failure.name if failure else None

    @property
    def ok(self) -> bool:
        if self.report.verdict is not self.expected:
            return False
        return self.expected_check is None or self.failing_check == self.expected_check

    def problem(self) -> str:
        """Why the proof failed, in one line ('' when it holds)."""
        if self.ok:
            return ""
        got = f"{self.report.verdict.value}" + (f" at {self.failing_check}" if self.failing_check else "")
        want = f"{self.expected.value}" + (f" at {self.expected_check}" if self.expected_check else "")
        return f"{self.path}: expected {want}, got {got}: {self.report.summary[:300]}"


def cases(exercise: Exercise) -> list[tuple[str, str, Verdict, str | None]]:
    """(kind, path, expected verdict, expected failing check) for everything an exercise pins."""
    found = [("reference", exercise.reference, Verdict.ACCEPTED, None)]
    found += [("solution", path, Verdict.ACCEPTED, None) for path in exercise.solutions]
    found.append(("starter", exercise.starter, exercise.starter_verdict, None))
    found += [("wrong", w.path, w.verdict, w.check) for w in exercise.wrong]
    return found


def version_warning(exercise: Exercise) -> str | None:
    """A warning when the installed torch is not one the exercise was verified on."""
    installed = torch.__version__.split("+")[0]
    if installed not in exercise.verified_torch:
        return (f"{exercise.id}: verified on torch {', '.join(exercise.verified_torch)}, running {installed}; "
                "compiler behaviour moves between releases, so re-check the pinned verdicts")
    return None


def prove(exercise: Exercise, *, sandbox=None, on_proof: Callable[[Proof], None] | None = None) -> list[Proof]:
    """Grade every pinned solution of `exercise`; each Proof says whether it got what it was pinned to."""
    proofs = []
    for kind, path, expected, check in cases(exercise):
        # A failing proof needs only its first failing check (the verdict and the pinned check are that one's).
        report = grade(exercise, exercise.read(path), sandbox=sandbox, filename=path.rsplit("/", 1)[-1],
                       stop_after_first_failure=kind in ("starter", "wrong"))
        proof = Proof(kind, path, expected, check, report)
        proofs.append(proof)
        if on_proof:
            on_proof(proof)
    return proofs
