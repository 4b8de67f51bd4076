"""The learner's and instructor's CLI, driven through click's runner and as a script."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from judge.parent.exercise import load_exercise

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def run(fake_course, tmp_path):
    runner = CliRunner()

    def invoke(*args):
        env = {"PRACTICE_EXERCISES_DIR": str(fake_course), "PRACTICE_WORKSPACE": str(tmp_path / "ws"),
               "COLUMNS": "200"}
        return runner.invoke(cli, list(args), env=env, catch_exceptions=False)

    return invoke


def test_list_shows_states(run, tmp_path):
    result = run("list")
    assert result.exit_code == 0
    assert "add-one" in result.output and "not started" in result.output


def test_grade_workspace_copy_created_from_starter_then_solved(run, tmp_path, fake_course):
    result = run("add-one", "--json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["verdict"] == "WRONG_ANSWER"
    assert report["sandbox"].startswith("none")  # one grading: two fresh processes, no warm workers to start
    mine = tmp_path / "ws" / "add_one.py"
    assert mine.read_text() == (fake_course / "add-one" / "starter.py").read_text()
    assert "failing" in run("list").output
    mine.write_text(mine.read_text().replace("x + 2", "x + 1"))
    result = run("add-one")
    assert result.exit_code == 0 and "ACCEPTED" in result.output
    assert "solved" in run("list").output


def test_grade_file_prints_graph_break_line(run, tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("import torch\n\ndef f(x):\n    print('dbg')\n    return x + 1\n")
    result = run("add-one", str(path))
    assert result.exit_code == 1
    assert "GRAPH_BREAK" in result.output and "line 4" in result.output and "print('dbg')" in result.output


@pytest.mark.parametrize("args, message", [
    (("nope",), "no such command or exercise 'nope'"),
    (("grade", "nope"), "unknown exercise 'nope'"),
    (("add-one", "/no/such/file.py"), "no such file"),
    (("hint", "nope"), "unknown exercise"),
])
def test_usage_errors_exit_2(args, message, fake_course, tmp_path):
    runner = CliRunner()
    env = {"PRACTICE_EXERCISES_DIR": str(fake_course), "PRACTICE_WORKSPACE": str(tmp_path)}
    result = runner.invoke(cli, list(args), env=env)
    assert result.exit_code == 2
    assert message in result.output


def test_hints_come_one_at_a_time(run):
    first = run("hint", "add-one", "--lang", "zh")
    assert first.exit_code == 0 and "提示 1/1：" in first.output and "加一" in first.output
    again = run("hint", "add-one", "--lang", "en")
    assert "Hint 1/1:" in again.output and "last hint" in again.output


def test_check_proves_the_fake_exercise(run):
    result = run("check", "add-one")
    assert result.exit_code == 0, result.output
    assert "reference" in result.output and "ACCEPTED" in result.output  # an ok proof: the verdict it got, as pinned
    assert "wrong/add_two.py" in result.output and "WRONG_ANSWER @ test_values" in result.output


def test_check_fails_on_a_broken_exercise(run):
    result = run("check", "broken-tests")
    assert result.exit_code == 1
    assert "FAIL" in result.output


def test_new_scaffolds_a_loadable_exercise_whose_test_fails(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["new", "my-exercise", "--exercises", str(tmp_path)])
    assert result.exit_code == 0, result.output
    exercise = load_exercise(tmp_path / "my-exercise")
    assert exercise.entry_point == "f" and exercise.test_files() == ["tests/test_hidden.py"]
    checked = runner.invoke(cli, ["check", "my-exercise", "--exercises", str(tmp_path)])
    assert checked.exit_code == 1 and "TODO: write the hidden tests" in checked.output
    assert "failed" in checked.output and "test_todo" in checked.output  # why: the failing check and its message
    again = runner.invoke(cli, ["new", "my-exercise", "--exercises", str(tmp_path)])
    assert again.exit_code == 2 and "already exists" in again.output


def test_a_scaffold_with_only_its_todos_filled_in_proves_itself(tmp_path, fake_course):
    import shutil

    shutil.copytree(fake_course / "add-one", tmp_path / "add-one")  # a course to place it in
    runner = CliRunner()
    assert runner.invoke(cli, ["new", "relu-it", "--exercises", str(tmp_path)]).exit_code == 0
    folder = tmp_path / "relu-it"
    assert load_exercise(folder).order == 2
    fill = {"solutions/reference.py": ("return x  # TODO: the reference solution", "return torch.relu(x)"),
            "starter.py": ("return x  # TODO: the code the learner starts from", "return x"),
            "wrong/plausible.py": ("return x  # TODO: a wrong but plausible solution", "return x.clamp(min=0.1)")}
    for rel, (todo, code) in fill.items():
        path = folder / rel
        path.write_text(path.read_text(encoding="utf-8").replace(todo, code), encoding="utf-8")
    test = folder / "tests" / "test_hidden.py"
    lines = test.read_text(encoding="utf-8").splitlines(keepends=True)
    test.write_text("".join(line for line in lines if "TODO: delete" not in line and "raise WrongAnswer" not in line),
                    encoding="utf-8")
    checked = runner.invoke(cli, ["check", "relu-it", "--exercises", str(tmp_path), "--verbose"])
    assert checked.exit_code == 0, checked.output


def test_a_failing_proof_says_why_in_columns_that_do_not_wrap(tmp_path, fake_course):
    import shutil

    shutil.copytree(fake_course / "add-one", tmp_path / "add-one")
    (tmp_path / "add-one" / "wrong" / "add_two.py").write_text("def f(x):\n    return x + 1\n")  # now correct
    result = CliRunner().invoke(cli, ["check", "add-one", "--exercises", str(tmp_path)], terminal_width=80)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    row = next(i for i, line in enumerate(lines) if "wrong/add_two.py" in line)
    assert lines[row].startswith("FAIL wrong") and lines[row].rstrip().endswith("s")  # one line: nothing wrapped
    assert lines[row + 1].split() == ["expected", "WRONG_ANSWER", "@", "test_values"]
    assert lines[row + 2].split() == ["got", "ACCEPTED"]
    assert "ACCEPTED, pinned WRONG_ANSWER" in result.output


def test_malformed_exercise_is_a_clear_error(tmp_path, fake_course):
    import shutil

    shutil.copytree(fake_course / "add-one", tmp_path / "add-one")
    toml = tmp_path / "add-one" / "exercise.toml"
    toml.write_text(toml.read_text().replace("difficulty = 1", "difficulty = 0"))
    result = CliRunner().invoke(cli, ["check", "--exercises", str(tmp_path)])
    assert result.exit_code == 2
    assert "difficulty" in result.output
    assert str(toml) in result.output  # the whole path, however long the temporary folder's is (never wrapped)


def test_script_runs_from_anywhere(fake_course, tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "practice" / "judge.py"), "list", "--exercises",
                           str(fake_course), "--workspace", str(tmp_path)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "add-one" in proc.stdout


def test_watch_grades_again_on_save(add_one, tmp_path):
    import threading
    import time

    from rich.console import Console

    from cli.terminal_grading import watch_file
    from cli.workspace import Workspace

    path = tmp_path / "mine.py"
    path.write_text("import torch\n\ndef f(x):\n    return x + 2\n")
    ws = Workspace(tmp_path / "ws")
    stop, watching = threading.Event(), threading.Event()
    console = Console(file=open(tmp_path / "out.txt", "w"), width=200)
    thread = threading.Thread(target=watch_file, args=(console, add_one, path, ws, "none", stop),
                              kwargs={"watching_event": watching}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 300
    while ws.status(add_one) == "not started" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert ws.status(add_one) == "failing"
    assert watching.wait(60), "the watcher never started"
    path.write_text("import torch\n\ndef f(x):\n    return x + 1\n")
    while ws.status(add_one) != "solved" and time.monotonic() < deadline:
        time.sleep(0.5)
    stop.set()
    thread.join(timeout=30)
    assert ws.status(add_one) == "solved"
    assert (tmp_path / "out.txt").read_text().count("mine.py changed") == 1


def test_an_exercise_that_needs_cuda_is_listed_skipped_and_refused_without_one(tmp_path, fake_course, monkeypatch):
    import shutil

    monkeypatch.setattr("judge.parent.requirements.cuda_missing", lambda: "torch sees no CUDA device on this machine")
    course = tmp_path / "course"
    shutil.copytree(fake_course / "add-one", course / "add-one")
    toml = course / "add-one" / "exercise.toml"
    toml.write_text(toml.read_text().replace('id = "add-one"', 'id = "add-one"\nneeds_cuda = true', 1))
    env = {"PRACTICE_EXERCISES_DIR": str(course), "PRACTICE_WORKSPACE": str(tmp_path / "ws"), "COLUMNS": "200"}
    runner = CliRunner()
    listed = runner.invoke(cli, ["list"], env=env, catch_exceptions=False)
    assert listed.exit_code == 0 and "needs a CUDA GPU" in listed.output
    checked = runner.invoke(cli, ["check"], env=env, catch_exceptions=False)
    assert checked.exit_code == 0, checked.output
    assert "skipped: add-one needs a CUDA GPU (torch sees no CUDA device on this machine)" in checked.output
    assert "0 failing proof(s) across 1 exercise(s), 1 skipped (needs a CUDA GPU)" in checked.output
    graded = runner.invoke(cli, ["add-one"], env=env)
    assert graded.exit_code == 2 and "add-one needs a CUDA GPU" in graded.output


@pytest.mark.slow
def test_a_gpu_exercise_with_a_cpu_tier_is_proven_and_graded_there_without_a_gpu(tmp_path, fake_course, monkeypatch):
    import shutil

    from cli.workspace import Workspace

    monkeypatch.setattr("judge.parent.requirements.cuda_missing", lambda: "torch sees no CUDA device on this machine")
    course = tmp_path / "course"
    shutil.copytree(fake_course / "add-one", course / "add-one")
    toml = course / "add-one" / "exercise.toml"
    toml.write_text(toml.read_text().replace('id = "add-one"', 'id = "add-one"\nneeds_cuda = true\n'
                                             'cpu_tier = ["test_values"]', 1).replace(
        'check = "test_values"', 'check = "test_values"\ntier = "cpu"', 1))
    env = {"PRACTICE_EXERCISES_DIR": str(course), "PRACTICE_WORKSPACE": str(tmp_path / "ws"), "COLUMNS": "200",
           "PRACTICE_DAEMON": "0"}
    runner = CliRunner()
    checked = runner.invoke(cli, ["prove", "--sandbox", "local"], env=env, catch_exceptions=False)
    # the reference passes the CPU tier, the wrong solution pinned to it fails it there; the starter waits for a GPU
    assert checked.exit_code == 0, checked.output
    assert "CPU tier only: add-one needs a CUDA GPU" in checked.output and "wrong/add_two.py" in checked.output
    assert "starter.py" not in checked.output and "0 failing proof(s)" in checked.output
    (tmp_path / "mine.py").write_text((course / "add-one" / "solutions" / "reference.py").read_text())
    graded = runner.invoke(cli, ["add-one", str(tmp_path / "mine.py"), "--lang", "en"], env=env)
    assert graded.exit_code == 1 and "CPU_TIER_PASSED" in graded.output and "waits for a CUDA GPU" in graded.output
    assert Workspace(tmp_path / "ws").status(load_exercise(course / "add-one")) == "failing"  # not solved


@pytest.mark.parametrize("name", ["prove", "check"])
def test_the_proving_command_answers_to_its_old_name_too(tmp_path, fake_course, name):
    """`practice prove` proves exercises; `check`, its first name, still runs it but is no longer listed."""
    import shutil

    shutil.copytree(fake_course / "add-one", tmp_path / "add-one")
    toml = tmp_path / "add-one" / "exercise.toml"
    toml.write_text(toml.read_text().replace("difficulty = 1", "difficulty = 0"))
    result = CliRunner().invoke(cli, [name, "--exercises", str(tmp_path)])
    assert result.exit_code == 2 and "difficulty" in result.output  # the format is proved first
    listed = CliRunner().invoke(cli, ["--help"]).output
    assert "prove" in listed and " check " not in listed
