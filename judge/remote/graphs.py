"""Graphs from the runner rebuilt here: untrusted IR through the allowlist (`judge.shared.ir`), never the runner's code.

An exercise about an operator the learner registers declares its namespace (`op_namespaces`) and a provider
(`GradingContext.provide_operators`): the verifier's own implementation is registered before a graph calling
it is rebuilt.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch.fx

from judge.checks.failures import Forbidden
from judge.remote.context import current
from judge.remote.failures import MalformedGraph
from judge.reports.i18n import T, in_code
from judge.shared import ir, phases


@dataclass
class Graph:
    """One graph the runner captured, rebuilt here, with where each of its inputs comes from."""

    gm: torch.fx.GraphModule
    inputs: list[dict]


def called_operators(body, depth: int = 0):
    """(namespace, name, overload) of every torch.ops call in an untrusted graph body (malformed parts skipped)."""
    if depth > ir.MAX_SUBGRAPH_DEPTH or not isinstance(body, dict):
        return
    nodes, subgraphs = body.get("nodes"), body.get("subgraphs")
    for spec in nodes[:ir.MAX_NODES] if isinstance(nodes, list) else []:
        target = spec.get("target") if isinstance(spec, dict) and spec.get("op") == "call_function" else None
        parts = target.split(".") if isinstance(target, str) else []
        if len(parts) in (4, 5) and parts[:2] == ["torch", "ops"] and all(ir.NAME.match(p) for p in parts[2:]):
            yield parts[2], parts[3], parts[4] if len(parts) == 5 else "default"
    for sub in list(subgraphs.values())[:ir.MAX_SUBGRAPHS] if isinstance(subgraphs, dict) else []:
        yield from called_operators(sub, depth + 1)


def rebuild(body) -> torch.fx.GraphModule:
    """A graph module from the runner's IR, allowlisted: FORBIDDEN for a call outside it, a protocol error for
    malformed IR."""
    context = current()
    namespaces, providers = context.op_namespaces, context.op_providers
    for namespace, name, overload in set(called_operators(body)) if providers else ():
        if namespace in providers and namespace in namespaces:
            providers[namespace](name, overload)
    try:
        with phases.span("verifier.rebuild"):
            return ir.from_ir(body, op_namespaces=namespaces)
    except ir.NotAllowed as exc:
        failure = Forbidden(T("the graph Dynamo captured from your code cannot be checked: {reason}. A graph may "
                              "call only tensor operations; keep your own functions out of it (no `allow_in_graph`, "
                              "no custom operator unless the exercise is about one).", reason=exc.text))
        failure.called = exc.called  # what the graph called, for a check that explains it in its own terms
        raise failure from None
    except ir.IRError as exc:
        raise MalformedGraph(T("the graph from your code's process is malformed: `{error}`", error=in_code(exc)),
                             str(exc)) from None
