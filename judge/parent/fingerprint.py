"""An exercise's version: a fingerprint of everything that decides a verdict.

The hidden tests, the reference, the starter, the public module, the entry point, the contract, the limits,
the operator namespaces and the trust level, and the judge's own version (a digest of the grading core's
source, `judge/**/*.py`): change any of them and the fingerprint changes, so a stored report that carries an
older fingerprint was graded under rules that no longer hold. Statements, hints and titles decide nothing and
are left out. `Report.fingerprint` records the one a report was graded under.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from judge.parent.exercise import Exercise

JUDGE_DIR = Path(__file__).parents[1]
LENGTH = 16  # hex digits shown and stored: 64 bits, plenty for telling versions of one exercise apart


@functools.lru_cache(maxsize=1)
def judge_version() -> str:
    """A digest of the grading core's Python source (every module that can change how a verdict is made)."""
    digest = hashlib.sha256()
    for path in sorted(JUDGE_DIR.rglob("*.py")):
        digest.update(path.relative_to(JUDGE_DIR).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:LENGTH]


def _files(exercise: Exercise) -> dict[str, str]:
    named = {"starter": exercise.starter, "reference": exercise.reference}
    if exercise.public:
        named["public"] = exercise.public
    named.update({f"test:{rel}": rel for rel in exercise.test_files()})
    return {role: hashlib.sha256(exercise.path(rel).read_bytes()).hexdigest() for role, rel in sorted(named.items())}


def _exercise_decides(exercise: Exercise) -> dict:
    return {
        "files": _files(exercise),
        "entry_point": exercise.entry_point,
        "contract": exercise.contract.model_dump(mode="json") if exercise.contract else None,
        "limits": exercise.limits.model_dump(mode="json"),
        "op_namespaces": exercise.op_namespaces,
        "trust": exercise.trust,
        # the CPU tier decides the verdict of a file that fails it (judge/shared/tiers.py); absent where none is
        # declared, so that the exercises without one keep their versions and draws
        **({"cpu_tier": exercise.cpu_tier} if exercise.cpu_tier else {}),
    }


def _digest(decides: dict) -> str:
    blob = json.dumps(decides, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:LENGTH]


def exercise_fingerprint(exercise: Exercise) -> str:
    """The exercise's current version: equal fingerprints mean the same submission gets the same verdict."""
    return _digest({**_exercise_decides(exercise), "judge": judge_version()})


def exercise_content(exercise: Exercise) -> str:
    """The exercise's own part of its version, without the judge's: what a grading's draw is keyed on
    (judge/shared/draw.py), so that a new judge alone draws the same inputs for the same file."""
    return _digest(_exercise_decides(exercise))


def exercise_versions(exercise: Exercise) -> tuple[str, str]:
    """(exercise_fingerprint, exercise_content) from one reading of the exercise's files, as a grading needs both."""
    decides = _exercise_decides(exercise)
    return _digest({**decides, "judge": judge_version()}), _digest(decides)
