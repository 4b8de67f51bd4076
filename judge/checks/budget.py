"""Compile budgets: serve a schedule of requests through a callable the learner compiled, and count.

    served = serve_schedule(serve.compile(learner_compiled=True, what=...), requests, expected_fn=fn)
    assert_no_eager_fallback(served)          # every request ran a compiled graph (recompile_limit not hit)
    assert_compiles(served.compiled, at_most=2, guard_failures=served.compiled.recompile_reasons)

A request that runs no graph and compiles none ran eagerly: Dynamo reached the function's `recompile_limit` and falls
back to eager without an error (a warning in a log). Counts are the graphs the runner captured; a request passes
only by running one of them here, on this side's own input, so a graph specialised to other sizes refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from judge import ir
from judge.checks.expected import expected_first
from judge.checks.failures import GraphBreak, Recompile, WrongAnswer
from judge.i18n import T
from judge.report import RecompileDiagnostic


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
