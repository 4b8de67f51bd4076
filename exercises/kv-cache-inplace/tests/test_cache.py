"""Hidden tests for kv-cache-inplace: one graph without data-dependent sizes, one compile for every position,
the caller's cache updated in place, the same outputs as the original."""

import torch

from judge.checks import (CompileCounter, GraphBreak, Recompile, assert_no_host_sync, assert_same, compile_one_graph,
                          recompile_log)
from judge.checks.inplace import assert_updated_in_place
from judge.checks.serving import short_guard
from judge.checks.shapes import assert_no_unbacked_symbols
from judge.checks.tracing import as_graph_break, raised_while_tracing
from judge.report import RecompileDiagnostic

B, TMAX, D = 2, 12, 4
# Twelve steps: the slots in a scrambled order, one slot written twice.
POSITIONS = [0, 1, 2, 3, 7, 4, 11, 5, 6, 2, 9, 10]
TRACE_EXPLANATION = ("int(pos) / pos[0] read the position out of the tensor (a host sync); inside the graph it "
                     "is a data-dependent integer that cannot index the cache. Keep the position a tensor "
                     "(index_copy_, scatter_, or indexing with the tensor pos).")


def new_cache(dtype=torch.float32):
    """A cache full of stale values: only slots <= pos may count."""
    return torch.randn(B, TMAX, D, dtype=dtype)


def step_inputs(p, dtype=torch.float32):
    return torch.tensor([p]), torch.randn(B, 1, D, dtype=dtype)


def one_graph(entry):
    cache, (pos, k) = new_cache(), step_inputs(3)
    try:
        return compile_one_graph(entry, cache, pos, k, what="append_and_read under fullgraph=True")
    except GraphBreak as exc:
        diag = exc.diagnostics[0] if exc.diagnostics else None
        if diag is None or diag.location is None or "data-dependent" not in diag.reason:
            raise
        diag.explanation = TRACE_EXPLANATION
        raise GraphBreak(f"append_and_read under fullgraph=True: graph break at line {diag.location.line} "
                         f"(`{diag.location.text}`): {TRACE_EXPLANATION}", exc.diagnostics) from None
    except Exception as exc:  # noqa: BLE001 - some tracing failures are plain Python errors
        if raised_while_tracing(exc):
            raise as_graph_break(exc, what="append_and_read under fullgraph=True",
                                 explanation=TRACE_EXPLANATION) from None
        raise


def run_steps(compiled, starter, check, dtype=torch.float32):
    """Step a compiled function and the original through POSITIONS on equal caches; `check` compares."""
    cache = new_cache(dtype)
    expected_cache = cache.clone()
    ptr = cache.data_ptr()
    for i, p in enumerate(POSITIONS, start=1):
        pos, k = step_inputs(p, dtype)
        before = cache.clone()
        out = compiled(cache, pos, k)
        expected = starter.append_and_read(expected_cache, pos, k)
        check(f"step {i} of {len(POSITIONS)}: pos = tensor([{p}]), cache [{B}, {TMAX}, {D}]", out, expected,
              cache, ptr, before, expected_cache)


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
    counter = CompileCounter("aot_eager")
    compiled = torch.compile(entry, backend=counter, fullgraph=True)
    cache = new_cache()
    with recompile_log() as reasons:
        for p in POSITIONS:
            compiled(cache, *step_inputs(p))
    if counter.frame_count > 1:
        guards = [short_guard(r) for r in reasons]
        failed = f" The guard that failed: `{guards[0]}`." if guards else ""
        raise Recompile(f"append_and_read was compiled {counter.frame_count} times for {len(POSITIONS)} "
                        f"positions; one compile must serve every position.{failed}",
                        [RecompileDiagnostic(compiles=counter.frame_count, limit=1, guard_failures=guards[:10])])


def check_cache(case, out, expected, cache, ptr, before, expected_cache):
    assert_updated_in_place(cache, data_ptr=ptr, before=before, expected=expected_cache, case=case,
                            what="cache")


def check_output(case, out, expected, *rest):
    assert_same(out, expected, case=case)


def test_cache_updated_in_place(entry, starter):
    """After every step (backend aot_eager) the caller's cache holds the new key, in its own storage"""
    run_steps(torch.compile(entry, backend="aot_eager", fullgraph=True), starter, check_cache)


def test_same_outputs(entry, starter):
    """Every step (backend aot_eager) returns what the original returns"""
    run_steps(torch.compile(entry, backend="aot_eager", fullgraph=True), starter, check_output)


def test_float64(entry, starter):
    """float64 caches and keys work the same"""
    compiled = torch.compile(entry, backend="aot_eager", fullgraph=True)

    def both(*args):
        check_cache(*args)
        check_output(*args)

    run_steps(compiled, starter, both, dtype=torch.float64)


def test_inductor(entry, starter):
    """With a real Inductor compile: one compile, the cache updated in place, the same outputs"""
    counter = CompileCounter("inductor")

    def both(*args):
        check_cache(*args)
        check_output(*args)

    run_steps(torch.compile(entry, backend=counter, fullgraph=True), starter, both)
    if counter.frame_count > 1:
        raise Recompile(f"with Inductor, append_and_read was compiled {counter.frame_count} times for "
                        f"{len(POSITIONS)} positions; one compile must serve every position.")
