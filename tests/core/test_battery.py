"""The battery: what an exercise's hidden tests are proven against, counted from its pinned wrong solutions by
kind of attack (judge/parent/battery.py), and shown by `practice show` and the exercise page."""

from __future__ import annotations

import shutil

import pytest
from rich.console import Console

from judge.parent.battery import KINDS, battery
from judge.parent.exercise import ExerciseError, load_course, load_exercise
from judge.reports.i18n import text
from judge.shared.paths import EXERCISES_DIR
from tests.conftest import FAKE_COURSE


def with_wrong(tmp_path, *entries: tuple[str, str | None]):
    """The fake course's add-one with more pinned wrong solutions: (file name, kind or None)."""
    folder = shutil.copytree(FAKE_COURSE / "add-one", tmp_path / "add-one")
    toml = folder / "exercise.toml"
    for name, kind in entries:
        (folder / "wrong" / name).write_text("def f(x):\n    return x\n", encoding="utf-8")
        toml.write_text(toml.read_text(encoding="utf-8") + f'\n[[wrong]]\npath = "wrong/{name}"\n'
                        f'verdict = "WRONG_ANSWER"\n' + (f'kind = "{kind}"\n' if kind else ""), encoding="utf-8")
    return folder


def test_every_kind_of_attack_is_pinned_somewhere_in_the_course():
    """A kind is declared only where a wrong solution of it is proven (tests/test_exercises.py proves each)."""
    used = {wrong.kind for exercise in load_course(EXERCISES_DIR) for wrong in exercise.wrong if wrong.kind}
    assert used == set(KINDS)


def test_an_unknown_kind_is_refused_naming_the_kinds(tmp_path):
    with pytest.raises(ExerciseError) as refused:
        load_exercise(with_wrong(tmp_path, ("guess.py", "telepathy")))
    assert "telepathy" in str(refused.value) and "global-setting" in str(refused.value)


def test_attacks_are_counted_by_kind_and_the_rest_as_mistakes(tmp_path):
    exercise = load_exercise(with_wrong(tmp_path, ("flag.py", "global-setting"), ("flag2.py", "global-setting"),
                                        ("copy.py", "own-copy"), ("slip.py", None)))
    proven = battery(exercise)
    assert proven.kinds == (("global-setting", 2), ("own-copy", 1)) and proven.mistakes == 2  # add_two + slip
    assert text(proven.summary(), "en") == ("Proven against 3 attack(s) of 2 kind(s) and 2 other wrong solution(s): "
                                            "none accepted, on torch " + exercise.verified_torch[-1] + ".")
    zh = [text(proven.summary(), "zh")] + [text(line, "zh") for line in proven.lines()]
    assert "2 类共 3 个作弊解法" in zh[0] and zh[1].endswith("：2") and "{" not in "".join(zh)


def test_no_pinned_wrong_solution_no_claim(tmp_path):
    folder = shutil.copytree(FAKE_COURSE / "add-one", tmp_path / "add-one")
    toml = folder / "exercise.toml"
    toml.write_text(toml.read_text(encoding="utf-8").split("[[wrong]]")[0], encoding="utf-8")
    assert battery(load_exercise(folder)).summary() is None


def test_practice_show_lists_the_battery(tmp_path):
    from cli.showing import show_exercise

    exercise = load_exercise(with_wrong(tmp_path, ("copy.py", "own-copy")))
    console = Console(record=True, width=200, force_terminal=False)
    show_exercise(console, exercise, tmp_path / "f.py", "en", None)
    shown = console.export_text()
    assert "Proven against 1 attack(s) of 1 kind(s) and 1 other wrong solution(s)" in shown
    assert "· compiles its own copy of the function it is given: 1" in shown
