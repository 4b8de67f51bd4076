"""What Dynamo captured: one-graph compiles, graph breaks with the learner's line, host syncs."""

from __future__ import annotations

import torch
import torch.fx

from judge.checks.failures import GraphBreak
from judge.compiler import break_registry
from judge.compiler.breaks import (
    breaks_in,
    explain_reason,
    graph_break_from_exception,
    graph_break_message,
    is_graph_break_error,
)
from judge.compiler.locations import stack_locations
from judge.compiler.recording import Captured, RecordingBackend
from judge.reports.i18n import T
from judge.reports.report import GraphBreakDiagnostic, GraphDiagnostic

HOST_SYNC_TARGETS = ("item", "tolist", "_local_scalar_dense", "numpy")

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


def find_graph_breaks(fn, *args, dynamic=None) -> list[GraphBreakDiagnostic]:
    """Every graph break Dynamo takes in `fn(*args)` (compiled without fullgraph), in order; `fn` may be the
    learner's (a `judge.remote.Ref`: Dynamo explains it in the runner)."""
    from judge import remote

    if isinstance(fn, remote.Ref):
        return remote.explain(fn, *args, dynamic=dynamic)
    return breaks_in(fn, *args, dynamic=dynamic)


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
