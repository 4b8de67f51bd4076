"""judge/ is laid out by the process each module runs in (docs/architecture.md, the picture): the runner's imports
never reach the verifier's modules, and no module imports a role above its own or beside it. Parsed, not imported."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.core.test_layers import ROOT, cycles, import_graph, module_imports, module_name

# Roles from the bottom up: a module imports its own role or one of an earlier level only. The runner and the
# verifier share a level and never import each other: they are the two sandboxed processes.
LEVELS: list[tuple[str, ...]] = [
    ("reports",),  # the report and its words: every process
    ("compiler",),  # compiler facts both sandboxed processes need; nothing of the checks
    ("shared",),  # the protocol, the wire, what more than one process runs
    ("runner", "verifier", "loader"),  # the learner's process; the hidden tests' process (checks library, remote
    # API); a process loading an artifact's bytes for the trusted side (judge/loader_side/)
    ("program",),  # judge.child: the program the sandbox runs, which becomes one or the other
    ("parent",),  # the trusted parent: exercises, jobs, grading, outcome
    ("facade",),  # judge/__init__.py: what the front-ends import
]
# Module (or package: every module under it) -> role; the longest name that matches wins.
ROLES = {
    "judge": "facade",
    "judge.reports": "reports",
    "judge.compiler": "compiler",
    "judge.shared": "shared",
    "judge.runner_side": "runner",
    "judge.verifier_side": "verifier",
    "judge.checks": "verifier",
    "judge.remote": "verifier",
    "judge.loader_side": "loader",
    "judge.child": "program",
    "judge.parent": "parent",
    # the cost feature in one package, each module in the process that runs it
    "judge.costs": "reports",  # its __init__ holds a docstring only
    "judge.costs.view": "reports",
    "judge.costs.spec": "shared",
    "judge.costs.measure": "verifier",
    "judge.costs.section": "verifier",
    "judge.costs.checks": "verifier",
    "judge.costs.memo": "parent",
}
RUNNER_ENTRY = "judge.runner_side.runner"
LOADER_ENTRY = "judge.loader_side.loader"
VERIFIER_ROLE = "verifier"


def role_of(module: str) -> str:
    """The role of `module`: its own entry in ROLES or its package's (the facade, judge/__init__.py, is its own only:
    a new module directly in judge/ has no role until it is put in the package of the process that runs it)."""
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        if ".".join(parts[:end]) in ROLES:
            return ROLES[".".join(parts[:end])]
    if module == "judge":
        return ROLES["judge"]
    raise KeyError(f"{module} has no role: put it in the package of the process that runs it (docs/architecture.md) "
                   "or name it in ROLES (tests/core/test_roles.py)")


def level(role: str) -> int:
    return next(i for i, roles in enumerate(LEVELS) if role in roles)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import of a module whose role is above the importer's, or beside it (runner <-> verifier)."""
    bad = []
    for module, imported in sorted(graph.items()):
        mine = role_of(module)
        for other in sorted(imported):
            theirs = role_of(other)
            if theirs != mine and level(theirs) >= level(mine):
                bad.append(f"{module} ({mine}) imports {other} ({theirs})")
    return bad


def with_packages(graph: dict[str, set[str]], root: Path = ROOT) -> dict[str, set[str]]:
    """The graph with the edges Python adds: importing a.b.c runs a/__init__.py and a/b/__init__.py first. A
    package's __init__ is followed through its module-level imports only: a function it defines for the front-ends
    (`judge.grade`, which imports the grading lazily) runs only where it is called."""
    full = {name: set(edges) for name, edges in graph.items()}
    for name in graph:
        for target in graph[name] | {name}:
            parts = target.split(".")
            full[name] |= {".".join(parts[:end]) for end in range(1, len(parts))} & set(graph)
    for name in graph:
        init = root / name.replace(".", "/") / "__init__.py"
        if init.is_file():
            full[name] = {m for m in full[name] if m in module_imports(init, set(graph), root, module_level=True)
                          or name.startswith(m + ".")}
    return full


def closure(graph: dict[str, set[str]], start: set[str], root: Path = ROOT) -> set[str]:
    """Every module importing `start` can run, imports inside functions included."""
    full = with_packages(graph, root)
    seen, todo = set(), list(start)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(full.get(module, ()))
    return seen


def runner_start(root: Path = ROOT) -> set[str]:
    """What the runner process imports: its entry module, and what judge.child imports at its top (the role's
    dispatch, inside `run_job`, imports the runner alone)."""
    return {RUNNER_ENTRY} | module_imports(root / "judge" / "child.py", set(judge_graph(root)), root, module_level=True)


def verifier_modules_in_runner(graph: dict[str, set[str]], start: set[str], root: Path = ROOT) -> list[str]:
    return sorted(m for m in closure(graph, start, root) if m in graph and role_of(m) == VERIFIER_ROLE)


def judge_graph(root: Path = ROOT) -> dict[str, set[str]]:
    return import_graph(root, ("judge",))


def test_every_module_of_judge_has_a_role():
    assert [role_of(m) for m in judge_graph()]
    with pytest.raises(KeyError, match="judge.newcomer has no role"):
        role_of("judge.newcomer")  # a module added directly in judge/


def test_the_runner_process_imports_no_module_of_the_verifier():
    graph = judge_graph()
    found = verifier_modules_in_runner(graph, runner_start())
    assert not found, f"the runner's imports reach the verifier's modules: {found}"
    assert "judge.compiler.breaks" in closure(graph, runner_start()), "the closure is computed"


def test_the_loader_process_imports_no_module_of_the_verifier_or_the_runner():
    """A loader runs an artifact's own code: like the runner, it must hold nothing of the checks (nor the runner's
    request handling, which it does not need)."""
    graph = judge_graph()
    start = {LOADER_ENTRY} | module_imports(ROOT / "judge" / "child.py", set(graph), ROOT, module_level=True)
    found = sorted(m for m in closure(graph, start) if m in graph and role_of(m) in (VERIFIER_ROLE, "runner"))
    assert not found, f"the loader's imports reach the verifier's or the runner's modules: {found}"
    assert "judge.shared.tamper" in closure(graph, start), "the closure is computed"


def test_no_module_imports_a_role_above_or_beside_its_own():
    bad = upward_imports(judge_graph())
    assert not bad, "imports across roles (tests/core/test_roles.py: LEVELS):\n" + "\n".join(bad)


def test_the_roles_make_no_import_cycle():
    assert cycles(judge_graph()) == []


def test_the_checks_find_an_import_planted_across_roles(tmp_path):
    """A copy of judge/ whose runner imports the checks library inside a function: both checks fail on it."""
    shutil.copytree(ROOT / "judge", tmp_path / "judge", ignore=shutil.ignore_patterns("locale", "__pycache__"))
    compiling = tmp_path / "judge" / "runner_side" / "compiling.py"
    compiling.write_text(compiling.read_text(encoding="utf-8")
                         + "\n\ndef _planted():\n    from judge.checks import sealed\n", encoding="utf-8")
    graph = judge_graph(tmp_path)
    assert module_imports(compiling, set(graph), tmp_path) >= {"judge.checks.sealed"}
    assert "judge.runner_side.compiling (runner) imports judge.checks.sealed (verifier)" in upward_imports(graph)
    found = verifier_modules_in_runner(graph, runner_start(tmp_path), tmp_path)
    assert {"judge.checks", "judge.checks.sealed", "judge.checks.failures"} <= set(found)


def test_the_order_check_finds_an_import_upward_in_a_synthetic_graph():
    graph = {"judge.reports.report": {"judge.parent.grading"}, "judge.parent.grading": {"judge.reports.report"},
             "judge.shared.wire": set(), "judge.verifier_side.verifier": {"judge.runner_side.runner"},
             "judge.runner_side.runner": {"judge.shared.wire"}}
    assert upward_imports(graph) == [
        "judge.reports.report (reports) imports judge.parent.grading (parent)",
        "judge.verifier_side.verifier (verifier) imports judge.runner_side.runner (runner)"]
    assert module_name(ROOT / "judge" / "child.py") == "judge.child"
