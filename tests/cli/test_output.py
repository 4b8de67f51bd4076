"""What the CLI prints around the work: paths whole, unknown words explained, no torch start-up noise."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.requirements import Requirement

from cli.main import cli

ROOT = Path(__file__).resolve().parent.parent.parent
# Longer than any terminal line: a renderer that wraps it must break it, so the test does not depend on
# where the wrapping falls (the temporary folder's length, the terminal's width).
DEEP = ["a-folder-with-a-rather-long-name-to-make-the-path-wrap"] * 6


def invoke(args: list[str], exercises: Path, workspace: Path):
    env = {"PRACTICE_EXERCISES_DIR": str(exercises), "PRACTICE_WORKSPACE": str(workspace), "COLUMNS": "80"}
    return CliRunner().invoke(cli, args, env=env)


@pytest.fixture
def malformed_course(tmp_path, fake_course) -> Path:
    """A course, deep enough that its paths are longer than a line, whose add-one has difficulty 0."""
    root = tmp_path.joinpath(*DEEP)
    shutil.copytree(fake_course / "add-one", root / "add-one")
    toml = root / "add-one" / "exercise.toml"
    toml.write_text(toml.read_text().replace("difficulty = 1", "difficulty = 0"))
    return root


@pytest.mark.parametrize("args", [
    ["check"],          # an instructor proving the course: `malformed exercise: ...` on stdout
    ["check", "add-one"],
    ["add-one"],        # a learner grading: `error: ...` on stderr
    ["hint", "add-one"],
])
def test_a_path_in_an_error_is_never_broken_across_lines(args, malformed_course, tmp_path):
    result = invoke(args, malformed_course, tmp_path / "ws")
    assert result.exit_code == 2, result.output
    toml = malformed_course / "add-one" / "exercise.toml"
    assert len(str(toml)) > 300
    assert str(toml) in result.output, result.output
    assert "difficulty" in result.output


def test_a_missing_file_path_is_never_broken_across_lines(fake_course, tmp_path):
    missing = tmp_path.joinpath(*DEEP, "mine.py")
    result = invoke(["add-one", str(missing)], fake_course, tmp_path / "ws")
    assert result.exit_code == 2
    assert f"{missing}: no such file" in result.output, result.output


def test_the_paths_the_cli_reports_are_never_broken_across_lines(fake_course, tmp_path):
    deep = tmp_path.joinpath(*DEEP)
    shown = invoke(["show", "add-one", "--workspace", str(deep / "ws")], fake_course, tmp_path / "ws")
    assert shown.exit_code == 0
    assert f"Your file: {deep / 'ws' / 'add_one.py'} " in shown.output, shown.output
    created = invoke(["new", "my-exercise", "--exercises", str(deep / "course")], fake_course, tmp_path / "ws")
    assert created.exit_code == 0
    assert f"Created {deep / 'course' / 'my-exercise'}. " in created.output, created.output


def test_error_messages_are_printed_as_written_not_as_markup(fake_course, tmp_path):
    missing = tmp_path / "[bold]" / "mine.py"
    result = invoke(["add-one", str(missing)], fake_course, tmp_path / "ws")
    assert result.exit_code == 2
    assert f"{missing}: no such file" in result.output, result.output


@pytest.mark.parametrize("args", [
    ["frobnicate"],
    ["frobnicate", "--help"],  # was: the help of `practice grade`, as if frobnicate were an exercise
    ["frobnicate", "mine.py"],
])
def test_an_unknown_word_is_neither_a_command_nor_an_exercise(args, fake_course, tmp_path):
    result = invoke(args, fake_course, tmp_path / "ws")
    assert result.exit_code == 2
    assert "no such command or exercise 'frobnicate'" in result.output, result.output
    for command in cli.commands:
        assert command in result.output
    assert "practice list" in result.output  # how to see the exercises
    assert "Grade FILE" not in result.output  # grade's help


def test_an_exercise_id_still_means_grade_wherever_the_exercises_folder_is_given(fake_course, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(fake_course / "add-one", elsewhere / "only-here")
    by_option = invoke(["only-here", "--exercises", str(elsewhere), "--help"], fake_course, tmp_path / "ws")
    assert by_option.exit_code == 0 and "Grade FILE" in by_option.output, by_option.output
    by_env = invoke(["only-here", "--help"], elsewhere, tmp_path / "ws")
    assert by_env.exit_code == 0 and "Grade FILE" in by_env.output, by_env.output
    not_there = invoke(["only-here", "--help"], fake_course, tmp_path / "ws")
    assert not_there.exit_code == 2 and "no such command or exercise 'only-here'" in not_there.output


def test_numpy_is_a_declared_dependency_and_installed_in_range():
    """torch warns on every start-up without NumPy; the project installs it rather than hiding the warning."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    numpy = next((Requirement(d) for d in dependencies if Requirement(d).name == "numpy"), None)
    assert numpy is not None, "numpy is not in pyproject.toml's dependencies"
    assert numpy.specifier.contains(version("numpy")), f"installed numpy {version('numpy')} is not {numpy}"


def test_a_real_grading_prints_no_torch_start_up_warning(fake_course, tmp_path):
    """The learner's terminal after `practice EXERCISE FILE`: the report, and nothing of torch's start-up."""
    mine = tmp_path / "mine.py"
    mine.write_text("import torch\n\ndef f(x):\n    return x + 1\n")
    proc = subprocess.run([sys.executable, str(ROOT / "practice" / "judge.py"), "add-one", str(mine), "--exercises",
                           str(fake_course), "--workspace", str(tmp_path / "ws")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "ACCEPTED" in output, output
    assert "Failed to initialize NumPy" not in output
    assert "Warning" not in output, output


def test_a_report_from_an_unverified_torch_says_so():
    from rich.console import Console

    from cli.render import print_report
    from judge.reports.report import Report, Verdict

    console = Console(record=True, width=200)
    print_report(console, Report(exercise_id="x", verdict=Verdict.ACCEPTED, summary="ok",
                                 version_warning="x: verified on torch 2.11.0, running 2.13.0; re-check"))
    assert "warning: x: verified on torch 2.11.0, running 2.13.0; re-check" in console.export_text()


def test_a_check_that_rests_on_the_learners_process_says_so_in_both_languages():
    from rich.console import Console

    from cli.render import print_report
    from judge.reports.i18n import T
    from judge.reports.report import CheckResult, Report, Verdict

    check = CheckResult(name="test_prints", passed=True)
    check.set_text("learner_process", T("what an eager call printed", zh="eager 调用打印的内容"))
    report = Report(exercise_id="x", verdict=Verdict.ACCEPTED, summary="ok",
                    checks=[check, CheckResult(name="test_numbers", passed=True)])
    for lang, label, reason in [("en", "rests on your code's own process:", "what an eager call printed"),
                                ("zh", "依据的是你的代码自己的进程所报告的事实：", "eager 调用打印的内容")]:
        console = Console(record=True, width=200)
        print_report(console, report, lang=lang)
        lines = console.export_text().splitlines()
        at = next(i for i, line in enumerate(lines) if "test_prints" in line)
        assert lines[at + 1].strip() == f"{label} {reason}"
        assert sum(label in line for line in lines) == 1  # test_numbers is decided here: no label
