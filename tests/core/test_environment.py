"""A clean environment grades correctly: every import is declared, and a module missing from the judge's own
environment is the judge's fault (INTERNAL_ERROR naming it), never the learner's."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib

from judge.parent.exercise import load_exercise
from judge.parent.grading import grade, make_sandbox
from judge.reports.report import Verdict, localized

ROOT = Path(__file__).resolve().parents[2]
# The project's packages, and the learner's file as an old-style hidden test imports it.
OWN = {"judge", "cli", "web", "sandbox", "practice", "tests", "benchmarks", "exercises", "submission"}
# Import names that a declared distribution provides under another top-level name.
# triton comes with torch's CUDA builds and is imported only where CUDA is (the prestarted GPU graders).
PROVIDED_BY = {"_pytest": "pytest", "functorch": "torch", "torchgen": "torch", "triton": "torch"}


def declared(*extras: str) -> set[str]:
    """Normalised names of pyproject.toml's dependencies (and of the given extras')."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"]) + [s for e in extras for s in project["optional-dependencies"][e]]
    return {normalise(re.split(r"[\s\[<>=!~;]", spec, maxsplit=1)[0]) for spec in specs}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every absolute import in a file, inside functions too."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def local_module(path: Path, name: str) -> bool:
    """Whether `name` is a module beside `path` (an exercise's hidden tests share a helper module)."""
    return (path.parent / f"{name}.py").is_file() or (path.parent / name / "__init__.py").is_file()


def undeclared_imports(files: list[Path], allowed: set[str]) -> dict[str, list[str]]:
    """{import name: files} of third-party imports whose distribution is not in `allowed`."""
    distributions = importlib.metadata.packages_distributions()
    found: dict[str, list[str]] = {}
    for path in files:
        for name in imported_modules(path):
            if name in sys.stdlib_module_names or name in OWN or local_module(path, name):
                continue
            dists = {normalise(d) for d in distributions.get(name, [])} | (
                {PROVIDED_BY[name]} if name in PROVIDED_BY else set())
            if not dists & allowed:
                found.setdefault(name, []).append(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path))
    return found


def python_files(*folders: str) -> list[Path]:
    """The Python files of `folders`, but the fake course's (broken on purpose, run only inside the judge)."""
    return [p for folder in folders for p in sorted((ROOT / folder).rglob("*.py"))
            if "fake_course" not in p.parts]


def test_the_product_imports_only_declared_dependencies():
    """judge/, cli/, web/ and sandbox/ run where only `pip install .` put packages."""
    problems = undeclared_imports(python_files("judge", "cli", "web", "sandbox"), declared())
    assert not problems, f"imported but not in pyproject.toml's dependencies: {problems}"


def test_the_notebook_extension_imports_only_its_extra():
    """practice/ (the Jupyter extension) runs where `pip install '.[notebook]'` put packages."""
    problems = undeclared_imports(python_files("practice"), declared("notebook"))
    assert not problems, f"imported but not in pyproject.toml's dependencies or the notebook extra: {problems}"


def test_the_tests_and_benchmarks_import_only_declared_dependencies():
    problems = undeclared_imports(python_files("tests", "benchmarks", "exercises"), declared("test"))
    assert not problems, f"imported but not in pyproject.toml's dependencies or its test extra: {problems}"


def test_the_import_check_finds_an_undeclared_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n\ndef f():\n    import hypothesis.strategies\n    from rich import console\n")
    assert undeclared_imports([planted], declared() - {"hypothesis"}) == {"hypothesis": [str(planted)]}


# A wrapper interpreter whose processes cannot import the named modules, as in an environment that lacks them.
HIDING_SITE = textwrap.dedent("""
    import importlib.machinery, os, sys

    HIDDEN = set(filter(None, os.environ.get("PRACTICE_TEST_HIDDEN_MODULES", "").split(",")))

    class Missing:
        def create_module(self, spec):
            raise ModuleNotFoundError(f"No module named {spec.name!r}", name=spec.name)

        def exec_module(self, module):
            pass

    class Hide:
        def find_spec(self, name, path=None, target=None):
            if name in HIDDEN or name.split(".")[0] in HIDDEN:
                return importlib.machinery.ModuleSpec(name, Missing())
            return None

    sys.meta_path.insert(0, Hide())
    """)


def interpreter_without(tmp_path: Path, *modules: str) -> str:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(HIDING_SITE)
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\nexport PYTHONPATH={site}:$PYTHONPATH "
                       f"PRACTICE_TEST_HIDDEN_MODULES={','.join(modules)}\nexec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


def graded_without(tmp_path: Path, exercise: Path, *modules: str):
    sandbox = make_sandbox("none", python=interpreter_without(tmp_path, *modules))
    return grade(load_exercise(exercise), (exercise / "solutions" / "reference.py").read_text(), sandbox=sandbox)


def everything_said(report) -> str:
    texts = []
    for lang in ("en", "zh"):
        shown = localized(report, lang)
        texts += [shown.summary] + [c.message for c in shown.checks] + [d.message for d in shown.diagnostics]
        texts += [d.message for c in shown.checks for d in c.diagnostics]
    return "\n".join(texts)


@pytest.mark.slow
def test_a_verifier_without_a_dependency_is_an_internal_error(tmp_path):
    """The contract search needs Hypothesis: without it a correct solution is the judge's failure, not a
    RUNTIME_ERROR of the learner's (as it was when pyproject.toml did not declare it)."""
    report = graded_without(tmp_path, ROOT / "exercises" / "graph-break-step", "hypothesis")
    assert report.verdict is Verdict.INTERNAL_ERROR, report.summary
    failed = [c for c in report.checks if not c.passed]
    assert failed and all(c.verdict is Verdict.INTERNAL_ERROR for c in failed), [c.name for c in failed]
    said = everything_said(report)
    assert "`hypothesis`" in said and "the verifier cannot import" in said and "校验进程无法导入" in said


@pytest.mark.slow
def test_a_runner_without_a_module_of_the_judge_is_an_internal_error(tmp_path, fake_course):
    """A module the runner needs only once requests arrive fails before the learner's file is imported."""
    report = graded_without(tmp_path, fake_course / "add-one", "judge.runner_side.compiling")
    assert report.verdict is Verdict.INTERNAL_ERROR, report.summary
    assert "judge.runner_side.compiling" in everything_said(report)
    assert not report.checks or all(c.verdict is not Verdict.RUNTIME_ERROR for c in report.checks)
