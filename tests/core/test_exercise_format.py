"""The exercise format: a valid folder loads, each malformed one names the file, the field and the fix."""

import shutil
from pathlib import Path

import pytest

from judge.parent.exercise import ExerciseError, find_exercise, load_course, load_exercise
from judge.shared.paths import EXERCISES_DIR

FAKE = Path(__file__).parent.parent / "fake_course" / "add-one"


@pytest.fixture
def folder(tmp_path) -> Path:
    target = tmp_path / "add-one"
    shutil.copytree(FAKE, target)
    return target


def edit(folder: Path, old: str, new: str) -> None:
    toml = folder / "exercise.toml"
    text = toml.read_text()
    assert old in text, f"fixture lacks {old!r}"
    toml.write_text(text.replace(old, new, 1))


def test_valid_folder_loads(folder):
    exercise = load_exercise(folder)
    assert exercise.id == "add-one" and exercise.entry_point == "f"
    assert exercise.test_files() == ["tests/test_add.py"]
    assert exercise.hints[0].get("zh") == "加一。"
    assert exercise.limits.cpu_limit == 120 and exercise.limits.idle_limit == 360


@pytest.mark.parametrize("old, new, expected", [
    ("format_version = 2", "format_version = 1", "format_version: this judge reads format_version = 2, got 1"),
    ('entry_point = "f"\n', "", "entry_point: required field is missing"),
    ('entry_point = "f"', 'entry_point = "not valid"', "entry_point: String should match pattern"),
    ("difficulty = 1", "difficulty = 9", "difficulty: Input should be less than or equal to 5"),
    ('starter_verdict = "WRONG_ANSWER"', 'starter_verdict = "NOPE"', "starter_verdict: Input should be"),
    ('id = "add-one"', 'id = "other"', "id 'other' must equal the folder name 'add-one'"),
    ("tags = [\"fake\"]", "tags = [\"fake\"]\ncolour = 3", "colour: unknown field"),
    ('path = "wrong/add_two.py"', 'path = "wrong/missing.py"', "wrong[0].path: wrong/missing.py does not exist"),
    ('verdict = "WRONG_ANSWER"\ncheck', 'verdict = "ACCEPTED"\ncheck', "listed as wrong but pinned to ACCEPTED"),
    ("[limits]\ntime_seconds = 120", "[limits]\ntime_seconds = -1", "limits.time_seconds: Input should be greater"),
    ("[title]", "[title\n", "not valid TOML"),
])
def test_malformed_field_is_named(folder, old, new, expected):
    edit(folder, old, new)
    with pytest.raises(ExerciseError) as info:
        load_exercise(folder)
    message = str(info.value)
    assert str(folder / "exercise.toml") in message
    assert expected in message


def test_missing_toml(tmp_path):
    with pytest.raises(ExerciseError, match="exercise.toml: missing"):
        load_exercise(tmp_path)


def test_missing_statement_file(folder):
    (folder / "statement.en.md").unlink()
    with pytest.raises(ExerciseError, match="statement_en: statement.en.md does not exist"):
        load_exercise(folder)


def test_no_hidden_tests(folder):
    shutil.rmtree(folder / "tests")
    with pytest.raises(ExerciseError, match="no hidden tests"):
        load_exercise(folder)


def test_course_order_and_unknown_id(fake_course):
    assert [e.id for e in load_course(fake_course)] == ["add-one", "broken-tests"]
    with pytest.raises(ExerciseError, match="unknown exercise 'nope'; known: add-one, broken-tests"):
        find_exercise(fake_course, "nope")


def test_every_shipped_exercise_loads():
    course = load_course(Path(__file__).parent.parent.parent / "exercises")
    assert course[0].id == "graph-break-step"
    assert len({e.order for e in course}) == len(course), "two exercises share an order"


def test_every_statement_promises_what_its_contract_declares():
    from judge.parent.statement_check import contract_problems

    checked = [e for e in load_course(EXERCISES_DIR) if e.contract is not None]
    assert len(checked) >= 6
    assert {e.id: contract_problems(e) for e in checked} == {e.id: [] for e in checked}


def test_a_statement_that_disagrees_with_its_contract_is_reported(tmp_path):
    import shutil

    from judge.parent.statement_check import contract_problems

    folder = tmp_path / "graph-break-step"
    shutil.copytree(EXERCISES_DIR / "graph-break-step", folder)
    zh = folder / "statement.md"
    zh.write_text(zh.read_text(encoding="utf-8").replace("`w` 形状 `[K, N]`", "`w` 形状 `[K, M]`")
                  .replace("float32 或 float64", "float32、float16 或 float64"), encoding="utf-8")
    problems = contract_problems(load_exercise(folder))
    assert problems == [
        "statement.md (## 约定): gives `w` the shape [K, M], [contract] declares [K, N]",
        "statement.md (## 约定): names dtypes ['float16'] that [contract] does not allow",
    ]
