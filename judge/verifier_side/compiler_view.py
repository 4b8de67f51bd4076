"""The compiler's view of a grading, in the spirit of tlparse: each graph Dynamo captured from the learner's
code (its Python, with the learner's line above the nodes it made), why Dynamo compiled again, the guards it
installed, and the code Inductor generated. Built in the verifier from what it rebuilt and compiled itself (the
guards are the runner's words, shown only); it goes into every report, accepted ones too, and decides nothing.
"""

from __future__ import annotations

import hashlib
import json

import torch.fx

from judge.compiler.locations import stack_locations
from judge.reports.report import CapturedGraph, CompileEvent, CompilerView, GuardOrigin

MAX_GRAPHS = 8
MAX_CODE_CHARS = 20_000
MAX_RECOMPILES = 20
MAX_GUARD_CHARS = 12_000
MAX_KERNELS = 4
MAX_KERNEL_CHARS = 30_000
MAX_TIMELINE = 60
MAX_ORIGINS = 20


class ViewBuilder:
    """Collects what one grading's compiles produced; `view()` is the report's `compiler` field."""

    def __init__(self):
        self.graphs: dict[str, CapturedGraph] = {}
        self.recompiles: list[str] = []
        self.guards = ""
        self.kernels: list[str] = []
        self.timeline: list[CompileEvent] = []
        self.origins: list[GuardOrigin] = []
        self.test, self.calls_in_test = "", 0
        # this test's, for its RECOMPILE diagnostics (judge/compiler/guard_origin.py)
        self.test_origins: list[GuardOrigin] = []

    def start_test(self, name: str) -> None:
        """The calls that follow belong to hidden test `name` (their timeline entries name it)."""
        self.test, self.calls_in_test, self.test_origins = name[:200], 0, []

    def add_call(self, inputs: str, compiled: int, origins: list[GuardOrigin], reasons: list[str]) -> None:
        """One call of a compiled target: its inputs, the graphs it compiled, and where its failed guards came from."""
        self.calls_in_test += 1
        self.test_origins += origins
        for origin in origins:
            if origin not in self.origins and len(self.origins) < MAX_ORIGINS:
                self.origins.append(origin)
        if len(self.timeline) >= MAX_TIMELINE:
            return
        first = origins[0] if origins else None
        guard = (first.guard if first else (reasons[0] if reasons else "")) if compiled else ""
        self.timeline.append(CompileEvent(test=self.test, call=self.calls_in_test, inputs=inputs[:300],
                                          compiled=compiled, guard=guard[:300],
                                          line=first.location.line if guard and first and first.location else None))

    def add_graph(self, body: dict, gm: torch.fx.GraphModule) -> None:
        """A graph rebuilt from the runner's IR `body` (the same graph twice is shown once; a graph that computes
        nothing, only handing its inputs back, is not shown: it has no line of the learner's to show)."""
        key = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
        if key in self.graphs or len(self.graphs) >= MAX_GRAPHS or not computes(gm):
            return
        self.graphs[key] = annotated(gm)

    def add_recompiles(self, reasons: list[str]) -> None:
        for reason in reasons:
            if reason not in self.recompiles and len(self.recompiles) < MAX_RECOMPILES:
                self.recompiles.append(reason)

    def add_guards(self, text: str) -> None:
        if not self.guards and text:
            self.guards = text[:MAX_GUARD_CHARS]

    def add_kernel(self, code: str) -> None:
        if code and code not in self.kernels and len(self.kernels) < MAX_KERNELS:
            self.kernels.append(code[:MAX_KERNEL_CHARS])

    def view(self) -> CompilerView | None:
        if not (self.graphs or self.recompiles or self.guards or self.kernels or self.timeline):
            return None
        return CompilerView(graphs=list(self.graphs.values()), recompiles=self.recompiles, guards=self.guards,
                            kernels=self.kernels, timeline=self.timeline, origins=self.origins)


def computes(gm: torch.fx.GraphModule) -> bool:
    """Whether the graph has an operation (not only placeholders and its output)."""
    return any(node.op not in ("placeholder", "output", "get_attr") for node in gm.graph.nodes)


def annotated(gm: torch.fx.GraphModule) -> CapturedGraph:
    """The graph's Python with a `# File: solution.py:N ..., code: ...` line above the nodes each line made."""
    lines: list[int] = []
    graph = torch.fx.Graph()
    env: dict = {}
    for node in gm.graph.nodes:  # a copy, so the graph the checks run keeps its own metadata
        copy = graph.node_copy(node, lambda n: env[n])
        env[node] = copy
        stack = (node.meta.get("ir") or {}).get("stack") or node.meta.get("stack_trace")
        found = stack_locations(stack) if isinstance(stack, str) else []
        if found:
            copy.meta["stack_trace"] = stack
            lines.append(found[-1].line)
    try:
        code = graph.python_code("self", verbose=True).src.strip()
    except Exception:  # noqa: BLE001 - a graph FX cannot print verbosely is shown plainly
        code = gm.code.strip()
    return CapturedGraph(code=code[:MAX_CODE_CHARS], learner_lines=sorted(set(lines)), inputs=signature(gm))


def describe_inputs(args, kwargs=None) -> str:
    """A call's inputs as the compiler sees them: `float32[4, 8], int 3` (values only where Dynamo guards them)."""
    def one(value) -> str:
        if isinstance(value, torch.Tensor):
            return f"{str(value.dtype).removeprefix('torch.')}[{', '.join(map(str, value.shape))}]"
        if isinstance(value, (bool, int, float)):
            return f"{type(value).__name__} {value!r}"[:40]
        if isinstance(value, (list, tuple)):
            return "(" + ", ".join(one(v) for v in value[:8]) + (", ..." if len(value) > 8 else "") + ")"
        return type(value).__name__
    shown = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in (kwargs or {}).items()]
    return ", ".join(shown)[:300]


def signature(gm: torch.fx.GraphModule) -> str:
    """The graph's inputs as `name: dtype[sizes]` (sizes as Dynamo saw them: a symbol is a dynamic size)."""
    shown = []
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        value = (node.meta.get("ir") or {}).get("value") or {}
        name = (node.meta.get("ir") or {}).get("source") or node.name
        if "shape" in value:
            shown.append(f"{name}: {value.get('dtype', '?')}[{', '.join(map(str, value['shape']))}]")
        elif "sym" in value:
            shown.append(f"{name}: {value['sym']}")
        else:
            shown.append(str(name))
    return ", ".join(shown)[:500]
