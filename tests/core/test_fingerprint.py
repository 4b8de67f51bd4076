"""An exercise's fingerprint changes with what decides a verdict, and only with that."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judge.parent.exercise import load_exercise
from judge.parent.fingerprint import exercise_fingerprint, judge_version

FAKE = Path(__file__).parent.parent / "fake_course" / "add-one"


@pytest.fixture
def folder(tmp_path) -> Path:
    return Path(shutil.copytree(FAKE, tmp_path / "add-one"))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("what, edit", [
    ("a hidden test", lambda f: _edit(f / "tests" / "test_add.py", "for n in (1, 5)", "for n in (1, 5, 7)")),
    ("the reference", lambda f: _edit(f / "solutions" / "reference.py", "x + 1", "1 + x")),
    ("the starter", lambda f: (f / "starter.py").write_text("def f(x):\n    return x\n", encoding="utf-8")),
    ("the limits", lambda f: _edit(f / "exercise.toml", "time_seconds = 120", "time_seconds = 60")),
    ("the entry point", lambda f: _edit(f / "exercise.toml", 'entry_point = "f"', 'entry_point = "g"')),
    ("a new hidden test file", lambda f: (f / "tests" / "test_more.py").write_text("def test_x(entry):\n    pass\n")),
    ("a CPU tier", lambda f: _edit(f / "exercise.toml", 'id = "add-one"', 'id = "add-one"\nneeds_cuda = true\n'
                                   'cpu_tier = ["test_values"]')),
])
def test_what_decides_a_verdict_changes_the_fingerprint(folder, what, edit):
    before = exercise_fingerprint(load_exercise(folder))
    edit(folder)
    assert exercise_fingerprint(load_exercise(folder)) != before, what


@pytest.mark.parametrize("what, edit", [
    ("the statement", lambda f: _edit(f / "statement.en.md", "", "A new first line.\n")),
    ("a hint", lambda f: _edit(f / "exercise.toml", 'en = "Add one."', 'en = "Add exactly one."')),
    ("the title", lambda f: _edit(f / "exercise.toml", 'en = "Add one"', 'en = "Plus one"')),
])
def test_what_a_learner_only_reads_leaves_it(folder, what, edit):
    before = exercise_fingerprint(load_exercise(folder))
    edit(folder)
    assert exercise_fingerprint(load_exercise(folder)) == before, what


def test_the_judge_version_is_part_of_it(folder, monkeypatch):
    from judge.parent import fingerprint

    exercise = load_exercise(folder)
    before = exercise_fingerprint(exercise)
    monkeypatch.setattr(fingerprint, "judge_version", lambda: "another judge")
    assert exercise_fingerprint(exercise) != before
    assert len(judge_version()) == fingerprint.LENGTH


def test_every_report_of_grade_carries_it(folder):
    """Even a report made before any code runs (a file over the size limit) says which version judged it."""
    from judge.parent.grading import grade
    from judge.parent.job import MAX_SOURCE_BYTES

    exercise = load_exercise(folder)
    events = []
    report = grade(exercise, "#" * (MAX_SOURCE_BYTES + 1), on_event=events.append)
    assert report.verdict.value == "LOAD_ERROR"
    assert report.fingerprint == exercise_fingerprint(exercise)
    assert events[-1].report.fingerprint == report.fingerprint
