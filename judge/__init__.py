"""The grading core: exercises in, reports out. Front-ends call `grade`."""

from judge.parent.exercise import Exercise, ExerciseError, find_exercise, load_course, load_exercise
from judge.reports.report import CheckResult, ProgressEvent, Report, Verdict


def grade(exercise, source, **kwargs):
    """See `judge.parent.grading.grade` (imported lazily: the child harness imports `judge` without torch set up)."""
    from judge.parent.grading import grade as _grade

    return _grade(exercise, source, **kwargs)


__all__ = ["CheckResult", "Exercise", "ExerciseError", "ProgressEvent", "Report", "Verdict", "find_exercise",
           "grade", "load_course", "load_exercise"]
