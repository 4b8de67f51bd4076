"""What an exercise's hidden tests are proven against: its pinned wrong solutions, counted by kind of attack.

A pinned wrong solution may name the kind of attack it is (`kind` in exercise.toml's [[wrong]]); the suite proves
every pinned solution at its verdict on each change (tests/test_exercises.py), so a kind listed here is a kind the
hidden tests were seen to reject, on the torch the exercise is verified on. A wrong solution without a kind is a
mistake a learner could make in good faith. `practice show` and the exercise page show the battery, so every kind
ever found stays a test and is seen to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from judge.reports.i18n import T

if TYPE_CHECKING:
    from judge.parent.exercise import Exercise

# The kinds of attack, declared once: exercise.toml names them, the battery counts them.
KINDS: dict[str, T] = {
    "global-setting": T("changes a process-wide compiler or torch setting instead of the code"),
    "hides-break": T("hides a graph break (disabled, or inside an operator of its own) instead of removing it"),
    "lower-precision": T("computes in a lower precision than the caller's dtype"),
    "visible-examples": T("fits only the sizes, shapes or values the statement shows"),
    "measured-shape": T("takes the efficient form only where the cost is measured"),
    "hidden-work": T("hides work from what the checks count"),
    "imitates-check": T("recognises or imitates a check: its probe, or the calls it watches"),
    "own-copy": T("compiles its own copy of the function it is given"),
    "forged-artifact": T("hands over a forged graph, artifact or report"),
    "not-compiled": T("runs the work uncompiled where the compiler is the subject"),
}


@dataclass(frozen=True)
class Battery:
    """An exercise's pinned wrong solutions: how many of each kind of attack, how many honest mistakes."""

    kinds: tuple[tuple[str, int], ...]
    mistakes: int
    torch: str

    @property
    def attacks(self) -> int:
        return sum(count for _, count in self.kinds)

    def summary(self) -> T | None:
        """None for an exercise with no pinned wrong solution: nothing was tried."""
        if not self.kinds and not self.mistakes:
            return None
        if not self.kinds:
            return T("Proven against {mistakes} wrong solution(s): none accepted, on torch {torch}.",
                     mistakes=self.mistakes, torch=self.torch)
        return T("Proven against {attacks} attack(s) of {kinds} kind(s) and {mistakes} other wrong solution(s): "
                 "none accepted, on torch {torch}.", attacks=self.attacks, kinds=len(self.kinds),
                 mistakes=self.mistakes, torch=self.torch)

    def lines(self) -> list[T]:
        """Each kind with its count, in the order of KINDS."""
        return [T("{kind}: {count}", kind=KINDS[kind], count=count) for kind, count in self.kinds]


def battery(exercise: Exercise) -> Battery:
    counted = {kind: sum(1 for wrong in exercise.wrong if wrong.kind == kind) for kind in KINDS}
    return Battery(kinds=tuple((kind, n) for kind, n in counted.items() if n),
                   mistakes=sum(1 for wrong in exercise.wrong if wrong.kind is None),
                   torch=exercise.verified_torch[-1] if exercise.verified_torch else "?")
