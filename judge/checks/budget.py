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

import torch

from judge.checks.expected import expected_first
from judge.checks.failures import GraphBreak, Recompile, WrongAnswer
from judge.i18n import T
from judge.report import RecompileDiagnostic


def describe_request(x: torch.Tensor) -> str:
    """`x [2, 9, 16] float32`: how a message names a request."""
    return f"x {list(x.shape)} {str(x.dtype).removeprefix('torch.')}"


@dataclass
class Served:
    """What serving a schedule gave: per request (x, output computed here or None when it ran eagerly, expected),
    and the positions (1-based) of the requests that ran eagerly."""

    compiled: object
    results: list[tuple[torch.Tensor, object, object]] = field(default_factory=list)
    eager: list[int] = field(default_factory=list)


def serve_schedule(compiled, requests: list[torch.Tensor], *, expected_fn=None, allow_eager: bool = False) -> Served:
    """Call `compiled` (a `RemoteCompiled` made with `learner_compiled=True`) on each request in order.

    A request that ran no graph and compiled none is recorded in `.eager` (with `allow_eager`), else fails at once
    with RECOMPILE (`eager_fallback`). `expected_fn`, when given, is computed first on a pristine copy."""
    served = Served(compiled)
    for i, x in enumerate(requests, start=1):
        before = compiled.frame_count
        try:
            expected, out = expected_first(expected_fn or (lambda x: None), compiled, x)
        except GraphBreak:
            if compiled.frame_count == 0:
                raise WrongAnswer(T("serving never compiled `fn` through the judge's backend: return a `torch.compile`'d function (compiled "
                                    "with the `backend` you are given, where the exercise hands you one)")) from None
            if compiled.frame_count != before:
                raise
            served.eager.append(i)
            if not allow_eager:
                raise eager_fallback(compiled, i, x) from None
            served.results.append((x, None, None))
            continue
        served.results.append((x, out, expected))
    return served


def eager_fallback(compiled, i: int, x: torch.Tensor) -> Recompile:
    """The failure of request `i`, which no compiled graph served (the recompile limit was reached)."""
    reasons = list(compiled.recompile_reasons)
    limit = T("request {i} ({request}) ran eagerly: after {count} compiles Dynamo reached the function's "
              "`recompile_limit` and fell back to eager without an error, so this request and every later one "
              "that fails the guards run uncompiled",
              i=i, request=describe_request(x), count=compiled.frame_count)
    if reasons:
        message = T("{limit}. The last guard that failed: `{guard}`", limit=limit, guard=reasons[-1])
    else:
        message = T("{limit}.", limit=limit)
    return Recompile(message, [RecompileDiagnostic(compiles=compiled.frame_count, limit=compiled.frame_count,
                                                   guard_failures=reasons[:10])])
