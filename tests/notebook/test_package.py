"""The extension works where the package is installed with pip, without a checkout: a wheel built from this
tree carries the `practice` package, its templates and the course; installed elsewhere, the course is found
in the package, and `import practice.judge` (the script's module) changes nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True, timeout=300)
    (built,) = out.glob("torch_practice-*.whl")
    return built


def test_the_wheel_ships_the_extension_and_the_course(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"practice/__init__.py", "practice/magic.py", "practice/cell_grading.py", "practice/templates/report.html",
            "practice/course/graph-break-step/exercise.toml", "practice/course/graph-break-step/starter.py"} <= names
    course = {n.split("/")[2] for n in names if n.startswith("practice/course/") and n.endswith("/exercise.toml")}
    assert course == {p.name for p in (ROOT / "exercises").iterdir() if (p / "exercise.toml").is_file()}
    assert not [n for n in names if "__pycache__" in n]


def test_installed_without_a_checkout_the_course_is_the_packaged_one(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    probe = ("import sys, judge.shared.paths, practice, practice.judge\n"
             "from judge.parent.exercise import find_exercise\n"
             "print(judge.shared.paths.EXERCISES_DIR)\n"
             "print(find_exercise(judge.shared.paths.EXERCISES_DIR, 'graph-break-step').id)\n"
             "print(callable(practice.load_ipython_extension), sys.path[0])\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRACTICE_")}
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**env, "PYTHONPATH": str(target)})  # ahead of this checkout's editable install
    assert done.returncode == 0, done.stderr
    where, exercise, loaded = done.stdout.splitlines()
    assert where == str(target / "practice" / "course") and exercise == "graph-break-step"
    assert loaded.startswith("True ") and loaded.split(" ", 1)[1] in ("", str(tmp_path))  # sys.path untouched


def test_the_notebook_extra_holds_what_a_headless_run_imports():
    """`jupyter execute` (nbclient) needs nbformat and a kernel; the extra lacked what a headless run imports."""
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["notebook"]
    names = {re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower() for requirement in extra}
    assert {"ipython", "ipykernel", "nbclient", "nbformat"} <= names
    assert "jupyter execute" in (ROOT / "docs" / "notebooks.md").read_text()
