"""Hidden tests for kv-cache-inplace: one graph without data-dependent sizes, one compile for every position,
the caller's cache updated in place, the same outputs as the original.

The runner compiles append_and_read and sends back the graph Dynamo captured; the graph is rebuilt here and
compiled here (aot_eager, then Inductor) so that AOTAutograd's functionalization writes each update back into
this side's own cache. The runner's compile count can only fail a check: every numeric check steps one session
through all twelve positions and requires that a single captured graph, run here, served them all.
"""

import torch

from judge import remote
from judge.checks import (CompileCounter, GraphBreak, Recompile, assert_no_host_sync, assert_same, compile_one_graph,
                          describe_tensor)
from judge.checks.inplace import assert_updated_in_place
from judge.checks.serving import short_guard
from judge.checks.shapes import assert_no_unbacked_symbols
from judge.report import GraphBreakDiagnostic, RecompileDiagnostic

B, TMAX, D = 2, 12, 4
# Twelve steps: the slots in a scrambled order, one slot written twice.
POSITIONS = [0, 1, 2, 3, 7, 4, 11, 5, 6, 2, 9, 10]
WHAT = "append_and_read under fullgraph=True"
TRACE_EXPLANATION = ("int(pos) / pos[0] read the position out of the tensor (a host sync); inside the graph it "
                     "is a data-dependent integer that cannot index the cache. Keep the position a tensor "
                     "(index_copy_, scatter_, or indexing with the tensor pos).")
USER_CODE_MARKER = "from user code:"


def new_cache(dtype=torch.float32):
    """A cache full of stale values: only slots <= pos may count."""
    return torch.randn(B, TMAX, D, dtype=dtype)


def step_inputs(p, dtype=torch.float32):
    return torch.tensor([p]), torch.randn(B, 1, D, dtype=dtype)


def _tracing_failure(exc: remote.CheckFailure) -> GraphBreak | None:
    """A GraphBreak at the learner's line for a plain Python error Dynamo raised while tracing (e.g. an
    IndexError when the unbacked integer from int(pos) indexes the cache); None for any other failure."""
    diag = next((d for d in exc.diagnostics if getattr(d, "exc_type", None)), None)
    text = diag.message if diag is not None else exc.message
    if USER_CODE_MARKER not in text:
        return None
    loc = diag.location if diag is not None else None  # the runner found the learner's line in that text
    stack = [loc] if loc else []
    first = text.split(USER_CODE_MARKER)[0].strip().splitlines()
    reason = f"{diag.exc_type if diag is not None else 'Error'}: {first[0] if first else ''}"[:600]
    where = f"line {loc.line} (`{loc.text}`)" if loc else "your code"
    return GraphBreak(f"{WHAT}: Dynamo could not trace {where}: {TRACE_EXPLANATION}",
                      [GraphBreakDiagnostic(reason=reason, explanation=TRACE_EXPLANATION, location=loc,
                                            user_stack=stack)])


def one_graph(entry):
    cache, (pos, k) = new_cache(), step_inputs(3)
    try:
        return compile_one_graph(entry, cache, pos, k, what=WHAT)
    except GraphBreak as exc:
        diag = exc.diagnostics[0] if exc.diagnostics else None
        if diag is None or diag.location is None or "data-dependent" not in diag.reason:
            raise
        diag.explanation = TRACE_EXPLANATION
        raise GraphBreak(f"{WHAT}: graph break at line {diag.location.line} (`{diag.location.text}`): "
                         f"{TRACE_EXPLANATION}", exc.diagnostics) from None
    except (remote.LearnerError, remote.CompileError) as exc:  # some tracing failures are plain Python errors
        converted = _tracing_failure(exc)
        if converted is None:
            raise
        raise converted from None


def session(entry, backend="aot_eager"):
    """append_and_read compiled in the runner; each captured graph is compiled here with `backend` and run on
    this side's cache, so the in-place update must reach this side's tensor."""
    return remote.RemoteCompiled(entry, {"fullgraph": True}, what="append_and_read", local_backend=backend)


def guards(compiled) -> list[str]:
    return [short_guard(r) for r in compiled.recompile_reasons]


def assert_one_graph_served(compiled, what="append_and_read"):
    """Every step ran the same captured graph (so it was checked here on every position)."""
    if compiled.frame_count > 1:
        found = guards(compiled)
        failed = f" The guard that failed: `{found[0]}`." if found else ""
        raise Recompile(f"{what} was compiled {compiled.frame_count} times for {len(POSITIONS)} positions; one "
                        f"compile must serve every position.{failed}",
                        [RecompileDiagnostic(compiles=compiled.frame_count, limit=1, guard_failures=found[:10])])


def run_steps(compiled, starter, check, dtype=torch.float32):
    """Step a compiled function and the original through POSITIONS on equal caches; `check` compares."""
    cache = new_cache(dtype)
    expected_cache = cache.clone()
    ptr = cache.data_ptr()
    for i, p in enumerate(POSITIONS, start=1):
        pos, k = step_inputs(p, dtype)
        before = cache.clone()
        out = compiled(cache, pos, k)
        expected = starter.append_and_read(expected_cache, pos.clone(), k.clone())
        case = f"step {i} of {len(POSITIONS)}: pos = tensor([{p}]), {describe_tensor('cache', cache)}"
        check(case, out, expected, cache, ptr, before, expected_cache)
    assert_one_graph_served(compiled)


def test_one_graph(entry):
    """torch.compile(append_and_read, fullgraph=True) captures one graph"""
    one_graph(entry)


def test_no_unbacked_symbols(entry):
    """The graph has no data-dependent (unbacked) sizes and no host sync"""
    graphs = one_graph(entry).graphs
    assert_no_unbacked_symbols(graphs, what="the graph of append_and_read")
    assert_no_host_sync(graphs, what="the graph of append_and_read")


def test_one_compile_for_every_position(entry):
    """Twelve positions compile once (backend aot_eager)"""
    compiled = session(entry)
    cache = new_cache()
    for p in POSITIONS:
        compiled(cache, *step_inputs(p))
    assert_one_graph_served(compiled)


def check_cache(case, out, expected, cache, ptr, before, expected_cache):
    assert_updated_in_place(cache, data_ptr=ptr, before=before, expected=expected_cache, case=case,
                            what="cache")


def check_output(case, out, expected, *rest):
    assert_same(out, expected, case=case)


def check_both(*args):
    check_cache(*args)
    check_output(*args)


def test_cache_updated_in_place(entry, starter):
    """After every step (backend aot_eager) the caller's cache holds the new key, in its own storage"""
    run_steps(session(entry), starter, check_cache)


def test_same_outputs(entry, starter):
    """Every step (backend aot_eager) returns what the original returns"""
    run_steps(session(entry), starter, check_output)


def test_float64(entry, starter):
    """float64 caches and keys work the same"""
    run_steps(session(entry), starter, check_both, dtype=torch.float64)


def test_inductor(entry, starter):
    """With a real Inductor compile: one compile, the cache updated in place, the same outputs"""
    counter = CompileCounter("inductor")  # the judge's own Inductor compiles of the captured graph
    run_steps(session(entry, counter), starter, check_both)
    if counter.frame_count > 1:
        raise Recompile(f"with Inductor, append_and_read was compiled {counter.frame_count} times for "
                        f"{len(POSITIONS)} positions; one compile must serve every position.")
