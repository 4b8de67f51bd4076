"""Compile budgets: serve a schedule of requests through a callable the learner compiled, and count.

    served = serve_schedule(serve.compile(learner_compiled=True, what=...), requests, expected_fn=fn)
    assert_no_eager_fallback(served)          # every request ran a compiled graph (recompile_limit not hit)
    assert_compiles(served.compiled, at_most=2, guard_failures=served.compiled.recompile_reasons)

A request that runs no graph and compiles none ran eagerly: Dynamo reached the function's `recompile_limit` and falls
back to eager without an error (a warning in a log). Counts are the graphs the runner captured; a request passes
only by running one of them here, on this side's own input, so a graph specialised to other sizes refuses it.
Code in the runner could rewrite those counts; `replay_here` confirms them with this side's own compile of the
grader's function, each size of every request marked as the learner's first graph recorded it:

    replayed = replay_here(public.pool, requests, recorded_arg_shapes(served.compiled.graphs[0], 2))
    assert_compiles(replayed.counter, at_most=1, guard_failures=replayed.reasons, what=...)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import torch
from torch._dynamo.decorators import mark_unbacked

from judge.checks.expected import expected_first
from judge.checks.failures import GraphBreak, Recompile, WrongAnswer
from judge.checks.recompiles import CompileCounter
from judge.compiler.logs import recompile_log
from judge.reports.i18n import T
from judge.reports.report import RecompileDiagnostic
from judge.shared import ir


def describe_request(request) -> str:
    """`x [2, 9, 16] float32`: how a message names a request (a tensor, or a tuple of the call's tensors)."""
    if isinstance(request, tuple):
        return ", ".join(describe_request(t) for t in request)
    return f"x {list(request.shape)} {str(request.dtype).removeprefix('torch.')}"


@dataclass
class Served:
    """What serving a schedule gave: per request (the request, its output computed here or None when it ran eagerly,
    what `expected_fn` gave),
    and the positions (1-based) of the requests that ran eagerly."""

    compiled: object
    results: list[tuple[object, object, object]] = field(default_factory=list)
    eager: list[int] = field(default_factory=list)


def serve_schedule(compiled, requests: list, *, expected_fn=None, allow_eager: bool = False) -> Served:
    """Call `compiled` (a `RemoteCompiled` made with `learner_compiled=True`) on each request in order: a tensor,
    or a tuple of the call's arguments.

    A request that ran no graph and compiled none is recorded in `.eager` (with `allow_eager`), else the first one
    fails with RECOMPILE once the schedule is served (`eager_fallback`); none compiled at all is a WRONG_ANSWER.
    `expected_fn`, when given, is computed first on a pristine copy."""
    served = Served(compiled)
    for i, x in enumerate(requests, start=1):
        before = compiled.frame_count
        args = x if isinstance(x, tuple) else (x,)
        try:
            expected, out = expected_first(expected_fn or (lambda *_: None), compiled, *args)
        except GraphBreak:
            if compiled.frame_count != before:
                raise
            served.eager.append(i)
            served.results.append((x, None, None))
            continue
        assert_captured_by_dynamo(compiled, compiled.calls[-1].graph, i)
        served.results.append((x, out, expected))
    if compiled.frame_count == 0:
        raise WrongAnswer(T("serving never compiled `fn` through the judge's backend: return a `torch.compile`'d "
                            "function (compiled with the `backend` you are given, where the exercise hands you one)"))
    if served.eager and not allow_eager:
        i = served.eager[0]
        raise eager_fallback(compiled, i, requests[i - 1])
    return served


def assert_captured_by_dynamo(compiled, index: int, i: int) -> None:
    """Fail unless graph `index` carries what Dynamo records on every tensor input it captured (its example value, with
    the shape the guards hold it to): a graph traced by other means and handed to the backend by hand was never
    compiled, and its inputs take any size, so "one compile" would mean nothing."""
    graph = compiled.graphs[index]
    for node, spec in zip(ir.placeholders(graph.gm), graph.inputs):
        if not isinstance(spec, dict) or spec.get("kind") not in ("arg", "kwarg"):
            continue
        meta = node.meta.get("ir", {})
        value = meta.get("value") if isinstance(meta.get("value"), dict) else {}
        if not isinstance(value.get("shape"), list):
            raise WrongAnswer(T("request {i} was served by a graph that torch.compile did not capture (its input "
                                "`{name}` carries no example value, as every input Dynamo captures does): compile "
                                "`fn` with torch.compile, do not hand graphs to the backend yourself",
                                i=i, name=node.name))


def eager_fallback(compiled, i: int, x) -> Recompile:
    """The failure of request `i`, which no compiled graph served (the recompile limit reached, or `fn` called)."""
    reasons = list(compiled.recompile_reasons)
    limit = T("request {i} ({request}) ran eagerly: no compiled graph served it (there were {count} compiles). "
              "Past a function's `recompile_limit` Dynamo falls back to eager without an error; code that calls "
              "`fn` itself instead of the compiled function does the same",
              i=i, request=describe_request(x), count=compiled.frame_count)
    if reasons:
        message = T("{limit}. The last guard that failed: `{guard}`", limit=limit, guard=reasons[-1])
    else:
        message = T("{limit}.", limit=limit)
    return Recompile(message, [RecompileDiagnostic(compiles=compiled.frame_count, limit=compiled.frame_count,
                                                   guard_failures=reasons[:10])])


def recorded_arg_shapes(graph, count: int) -> list[list]:
    """The shapes graph recorded for the call's first `count` arguments (symbols as their names: `u0` unbacked, `s0`
    backed), [] for an argument the graph does not take as an input (a copy of it, or nothing)."""
    shapes: list[list] = [[] for _ in range(count)]
    for node, spec in zip(ir.placeholders(graph.gm), graph.inputs):
        path = spec.get("path") if isinstance(spec, dict) and spec.get("kind") == "arg" else None
        value = node.meta.get("ir", {}).get("value")
        shape = value.get("shape") if isinstance(value, dict) else None
        if isinstance(path, list) and len(path) == 1 and path[0] in range(count) and isinstance(shape, list):
            shapes[path[0]] = shape
    return shapes


def mark_as_recorded(tensor: torch.Tensor, shape: list) -> None:
    """Mark each dim of `tensor` as `shape` recorded it: `u0` unbacked, `s0` (or an expression of sizes) dynamic, a
    number static; a shape of another rank marks nothing."""
    if len(shape) != tensor.dim():
        return
    for dim, size in enumerate(shape):
        if isinstance(size, str) and re.fullmatch(r"u\d+", size):
            mark_unbacked(tensor, dim)
        elif isinstance(size, str):
            torch._dynamo.mark_dynamic(tensor, dim)


@dataclass
class Replayed:
    """This side's own compile of a schedule: its counter, the guards that failed, the requests (1-based) that ran no
    graph."""

    counter: CompileCounter
    reasons: list[str]
    eager: list[int]


def replay_here(fn, requests: list, shapes: list[list], **compile_options) -> Replayed:
    """torch.compile(fn, **compile_options) here, each request's arguments marked as `shapes` recorded them, called in
    order: what Dynamo does with those marks, counted by this side."""
    counter = CompileCounter()
    runs = [0]

    def backend(gm, example_inputs):
        graph = counter(gm, example_inputs)

        def run(*args):
            runs[0] += 1
            return graph(*args)

        return run

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend, **compile_options)
    eager = []
    with recompile_log() as reasons:
        for i, request in enumerate(requests, start=1):
            args = request if isinstance(request, tuple) else (request,)
            for tensor, shape in zip(args, shapes):
                mark_as_recorded(tensor, shape)
            before = runs[0]
            compiled(*args)
            if runs[0] == before:
                eager.append(i)
    return Replayed(counter, list(reasons), eager)
