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
    sample.write_text("def f():\n    from judge.parent.exercise import Limits\n    import web.app\n")
    assert imported_packages(sample) == {"judge", "web"}


def test_the_sandbox_backends_do_not_import_each_other():
    """Each backend stands alone; shared parts live in modules of their own."""
    backends = {"bwrap_backend", "docker_backend", "local_backend", "subprocess_backend", "prestarted"}
    for name in backends:
        tree = ast.parse((ROOT / "sandbox" / f"{name}.py").read_text(encoding="utf-8"))
        modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not {f"sandbox.{b}" for b in backends - {name}} & modules, f"sandbox/{name}.py imports a backend"


# ------------------------------------------------------------------ cycles between modules

PACKAGES = tuple(ALLOWED)


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _typing_only(tree: ast.Module) -> set[int]:
    """Ids of the import nodes under `if TYPE_CHECKING:` (they never run)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return found


def module_imports(path: Path, modules: set[str], root: Path = ROOT, module_level: bool = False) -> set[str]:
    """The project modules a file imports, anywhere in it (inside functions too; not under TYPE_CHECKING).

    `import a.b` and `from a import b` (b a module) are imports of a.b: every import of a submodule runs its
    package's __init__ first, so that is not counted as an edge; `from a.b import name` (not a module) is one
    of a.b. A relative import is resolved against the file's package. `module_level`: only the imports that run
    when the module is imported (none inside a function or a class)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    if module_level:
        tree.body = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    skip = _typing_only(tree)
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            submodules = {f"{base}.{alias.name}" for alias in node.names} & modules
            found |= submodules or {base}
            if len(submodules) < len(node.names):  # some names are the module's own, not its submodules
                found.add(base)
    return {name for name in found if name in modules and name != here}


def import_graph(root: Path = ROOT, packages=PACKAGES) -> dict[str, set[str]]:
    paths = [p for package in packages for p in sorted((root / package).rglob("*.py"))
             if "node_modules" not in p.parts and "migrations" not in p.parts]
    modules = {module_name(p, root): p for p in paths}
    return {name: module_imports(path, set(modules), root) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of `graph`: one per strongly connected component of more than one module (Tarjan),
    each shown as a path that closes on itself."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(_path_through(sorted(component), graph))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _path_through(component: list[str], graph) -> list[str]:
    """A shortest cycle from the component's first module back to itself, for the message."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for other in sorted(graph[node] & members):
            if other == start:
                return paths[node] + [start]
            if other not in paths:
                paths[other] = paths[node] + [other]
                queue.append(other)
    return component


def test_no_module_imports_itself_through_others():
    """A cycle hidden by an import inside a function is still a cycle: split the module both sides need."""
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_cycle_check_finds_a_planted_cycle_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "judge"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from judge.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("import judge.a\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from judge import a\n")
    (pkg / "e.py").write_text("from judge import d\n")
    graph = import_graph(tmp_path, ("judge",))
    assert graph["judge.sub.b"] == {"judge.c"} and graph["judge.d"] == set()
    assert cycles(graph) == [["judge.a", "judge.sub.b", "judge.c", "judge.a"]]


REMOTE_LAYERS = ["failures", "transport", "context", "graphs", "values", "eager", "compiled", "stages", "refs"]


def test_the_remote_package_modules_each_import_only_those_below():
    """judge/remote: one job per module, in this order; each imports only modules before it (see its __init__)."""
    graph = import_graph()
    names = [f"judge.remote.{m}" for m in REMOTE_LAYERS]
    assert set(names) == {m for m in graph if m.startswith("judge.remote.")}, "a module of judge/remote is unlisted"
    bad = [f"{m} imports {other}" for i, m in enumerate(names) for other in sorted(graph[m])
           if other.startswith("judge.remote.") and names.index(other) >= i]
    assert not bad, "\n".join(bad)
