"""A grader for web tests that runs the exercise's hidden tests as they are now, in this process.

The fixture course's hidden tests import the learner's code as `submission` and assert on it; this grader runs
them against each submitted source and stamps the report with the exercise's fingerprint, as `judge.grade`
does, so editing a hidden test in a copy of the course changes both the verdict and the version, in
milliseconds. `gate` holds grading until set; `order` lists the submissions graded, in order.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path

from judge.parent.exercise import load_exercise
from judge.parent.fingerprint import exercise_fingerprint
from judge.reports.report import CheckResult, ProgressEvent, Report, Verdict
from tests.web.conftest import GatedGrader
from web.store import Submission

_IMPORT_LOCK = threading.Lock()  # `submission` is one name in sys.modules


class HiddenTestGrader(GatedGrader):
    def __init__(self, course_dir: Path):
        super().__init__()
        self.course_dir = Path(course_dir)
        self.order: list[str] = []

    def __call__(self, submission: Submission, publish: Callable[[ProgressEvent], None]) -> Report:
        self.begin()
        exercise = load_exercise(self.course_dir / submission.exercise_id)
        checks = [self._run(exercise.read(rel), submission.source, name)
                  for rel in exercise.test_files() for name in self._names(exercise.read(rel))]
        for check in checks:
            publish(ProgressEvent(type="check", check=check, total_checks=len(checks)))
        failed = next((c for c in checks if not c.passed), None)
        self.order.append(submission.id)
        verdict = failed.verdict if failed else Verdict.ACCEPTED
        return Report(exercise_id=exercise.id, verdict=verdict, summary=verdict.value, checks=checks, sandbox="hidden",
                      fingerprint=exercise_fingerprint(exercise))

    @staticmethod
    def _names(test_source: str) -> list[str]:
        return [line.split("(")[0].removeprefix("def ") for line in test_source.splitlines()
                if line.startswith("def test_")]

    @staticmethod
    def _run(test_source: str, source: str, name: str) -> CheckResult:
        module = types.ModuleType("submission")
        try:
            exec(compile(source, "solution.py", "exec"), module.__dict__)  # the fixture learner is the test itself
            with _IMPORT_LOCK:
                sys.modules["submission"] = module
                scope: dict = {}
                try:
                    exec(compile(test_source, "hidden_test.py", "exec"), scope)
                finally:
                    sys.modules.pop("submission", None)
            scope[name]()
        except AssertionError as exc:
            return CheckResult(name=name, passed=False, verdict=Verdict.WRONG_ANSWER, message=str(exc) or name)
        except Exception as exc:  # noqa: BLE001 - the learner's error is its verdict
            return CheckResult(name=name, passed=False, verdict=Verdict.RUNTIME_ERROR, message=repr(exc))
        return CheckResult(name=name, passed=True)
