"""What Dynamo captured: one-graph compiles, graph breaks with the learner's line, host syncs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import torch
import torch.fx

from judge.checks.failures import GraphBreak
from judge.compiler import break_registry
from judge.compiler.breaks import (
    explain_reason,
    graph_break_from_exception,
    graph_break_message,
    is_graph_break_error,
    short_reason,
)
from judge.compiler.locations import is_learner_file, location, stack_locations
from judge.compiler.logs import artifact_log
from judge.reports.i18n import T
from judge.reports.report import GraphBreakDiagnostic, GraphDiagnostic

HOST_SYNC_TARGETS = ("item", "tolist", "_local_scalar_dense", "numpy")

@dataclass
class Captured:
    """The result of a recorded compile: the output and every graph Dynamo handed to the backend."""

    output: object
    graphs: list[torch.fx.GraphModule] = field(default_factory=list)
    example_inputs: list[list] = field(default_factory=list)


class RecordingBackend:
    """A backend that records each graph and runs it with `inner` (default: eager)."""

    def __init__(self, inner="eager"):
        self.inner = inner
        self.graphs: list[torch.fx.GraphModule] = []
        self.example_inputs: list[list] = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        self.example_inputs.append(list(example_inputs))
        if self.inner == "eager":
            return gm.forward
        from torch._dynamo.backends.registry import lookup_backend

        return lookup_backend(self.inner)(gm, example_inputs)


def _learner_lines_in_text(text: str):
    return stack_locations(text)


def _one_graph_expected(what: T | str, count: int) -> T:
    return T("{what}: expected one graph, Dynamo captured {count}", what=what, count=count)


def compile_one_graph(fn, *args, dynamic=None, backend="eager",
                      what: T | str = T.same("`torch.compile(fullgraph=True)`"), mutates_args=(),
                      **compile_kwargs) -> Captured:
    """Compile `fn` with fullgraph=True, call it on `args`, and require exactly one captured graph.

    Raises GraphBreak (naming the learner's line) when Dynamo cannot capture it in one graph. `fn` may be a
    `judge.remote.Ref` (the learner's entry point): it is compiled in the runner on example inputs like
    `args`, and the graph is run here on `args`, sealed (`mutates_args`: the arguments it may update in place).
    """
    from judge import remote

    if isinstance(fn, remote.Ref):
        compiled = fn.compile(fullgraph=True, dynamic=dynamic, what=what, mutates_args=mutates_args,
                              **compile_kwargs)
        output = compiled(*args)
        if compiled.frame_count != 1:
            raise GraphBreak(_one_graph_expected(what, compiled.frame_count), [])
        return Captured(output, compiled.graph_modules, [])
    recorder = RecordingBackend(backend)
    compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic, backend=recorder, **compile_kwargs)
    try:
        output = compiled(*args)
    except torch._dynamo.exc.TorchDynamoException as exc:
        if not is_graph_break_error(exc):
            raise
        fn(*args)  # code that fails eagerly too is a runtime error, not a graph break: let it raise
        diag = graph_break_from_exception(exc)
        raise GraphBreak(graph_break_message(diag, what), [diag]) from None
    if len(recorder.graphs) != 1:
        breaks = find_graph_breaks(fn, *args, dynamic=dynamic)
        message = _one_graph_expected(what, len(recorder.graphs))
        if breaks:
            message = graph_break_message(breaks[0], what)
        raise GraphBreak(message, breaks)
    return Captured(output, recorder.graphs, recorder.example_inputs)


_BREAK_AT = re.compile(r"Graph break in user code at (.+):(\d+)")
_REASON = re.compile(r"Graph Break Reason:\s*(.*?)(?:\n\s*User code traceback:|\Z)", re.S)


def graph_break_log():
    """Collect Dynamo's graph-break log records (every break, even one on the first line)."""
    return artifact_log("graph_breaks")


def find_graph_breaks(fn, *args, dynamic=None) -> list[GraphBreakDiagnostic]:
    """Every graph break Dynamo takes in `fn(*args)` (compiled without fullgraph), in order."""
    from judge import remote

    if isinstance(fn, remote.Ref):
        return remote.explain(fn, *args, dynamic=dynamic)
    torch._dynamo.reset()
    with graph_break_log() as records:
        torch.compile(fn, dynamic=dynamic, backend=RecordingBackend())(*args)
    torch._dynamo.reset()
    found = []
    for record in records:
        text = record.getMessage()
        at = _BREAK_AT.search(text)
        reason_match = _REASON.search(text)
        reason = short_reason(reason_match.group(1) if reason_match else text)
        stack = _learner_lines_in_text(text)
        loc = stack[-1] if stack else None
        if loc is None and at and is_learner_file(at.group(1)):
            loc = location(at.group(1), int(at.group(2)))
        found.append(GraphBreakDiagnostic(reason=reason, explanation=explain_reason(reason),
                                          location=loc, user_stack=stack, gb_id=break_registry.classify(text)))
    return found


def node_stack(node: torch.fx.Node) -> str:
    """The user stack recorded for a node (rebuilt graphs carry it in meta['ir'])."""
    return node.meta.get("stack_trace") or node.meta.get("ir", {}).get("stack") or ""


def call_targets(gm: torch.fx.GraphModule) -> list[str]:
    """Names of everything the graph calls, e.g. ['matmul', 'sum', 'item', 'relu']."""
    names = []
    for node in gm.graph.nodes:
        if node.op in ("call_function", "call_method", "call_module"):
            target = node.target
            names.append(target if isinstance(target, str) else getattr(target, "__name__", str(target)))
    return names


def graph_code(gm: torch.fx.GraphModule) -> str:
    return gm.code.strip()


def assert_no_host_sync(graphs: list[torch.fx.GraphModule], what: T | str = T("the captured graph")) -> None:
    """Fail with GRAPH_BREAK if a graph reads tensor values into Python (item, tolist, ...)."""
    for gm in graphs:
        syncs = [name for name in call_targets(gm) if name in HOST_SYNC_TARGETS]
        if syncs:
            diag = GraphDiagnostic(title=T("captured graph"), code=graph_code(gm), highlight=syncs)
            node_line = _node_user_line(gm, syncs[0])
            diags = [diag]
            if node_line is not None:
                diags.insert(0, GraphBreakDiagnostic(reason=f"host sync: {syncs[0]}()",
                                                     gb_id=break_registry.classify(f"host sync: {syncs[0]}()"),
                                                     explanation=explain_reason(syncs[0]), location=node_line,
                                                     user_stack=[node_line]))
                message = T("{what} calls `{call}()` at line {line} (`{code}`): it copies a tensor value to Python "
                            "(a host sync). torch 2.13 can capture it in the graph, but it still stalls the device "
                            "and breaks on other settings; keep the value as a tensor instead.",
                            what=what, call=syncs[0], line=node_line.line, code=node_line.text)
            else:
                message = T("{what} calls `{call}()`: it copies a tensor value to Python (a host sync). torch 2.13 "
                            "can capture it in the graph, but it still stalls the device and breaks on other "
                            "settings; keep the value as a tensor instead.", what=what, call=syncs[0])
            raise GraphBreak(message, diags)


def _node_user_line(gm, target_name):
    for node in gm.graph.nodes:
        name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
        if name == target_name:
            stack = _learner_lines_in_text(node_stack(node))
            return stack[-1] if stack else None
    return None
