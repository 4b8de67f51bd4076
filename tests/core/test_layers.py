"""Layers point one way: front-ends (web, cli, practice) -> grading core (judge) -> sandbox. Parsed, not imported."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# package -> the project packages it may import
ALLOWED = {
    "sandbox": set(),
    "judge": {"sandbox"},
    "cli": {"judge", "sandbox", "web"},
    "practice": {"cli", "judge", "sandbox", "web"},  # the Jupyter extension, a front-end like cli
    "web": {"judge", "sandbox"},
}


def imported_packages(path: Path) -> set[str]:
    """Top-level project packages imported anywhere in a file (inside functions too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & set(ALLOWED)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_the_layers_below(package):
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if "node_modules" in path.parts:
            continue
        extra = imported_packages(path) - ALLOWED[package] - {package}
        if extra:
            bad.append(f"{path.relative_to(ROOT)} imports {', '.join(sorted(extra))}")
    assert not bad, "\n".join(bad)


def test_the_check_finds_an_import_inside_a_function(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text("def f():\n    from judge.exercise import Limits\n    import web.app\n")
    assert imported_packages(sample) == {"judge", "web"}


def test_the_sandbox_backends_do_not_import_each_other():
    """Each backend stands alone; shared parts live in modules of their own."""
    backends = {"bwrap_backend", "docker_backend", "local_backend", "subprocess_backend", "prestarted"}
    for name in backends:
        tree = ast.parse((ROOT / "sandbox" / f"{name}.py").read_text(encoding="utf-8"))
        modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not {f"sandbox.{b}" for b in backends - {name}} & modules, f"sandbox/{name}.py imports a backend"
