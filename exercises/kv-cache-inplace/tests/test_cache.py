"""Hidden tests for kv-cache-inplace: one graph without data-dependent sizes, one compile for every position,
the caller's cache updated in place, the same outputs as the original.

The runner compiles append_and_read and sends back the graph Dynamo captured; the graph is rebuilt here and
compiled here (aot_eager, then Inductor) so that AOTAutograd's functionalization writes each update back into
this side's own cache. The runner's compile count can only fail a check: every numeric check steps one session
through all twelve positions and requires that a single captured graph, run here, served them all.
"""

import pytest
import torch

from judge import remote
from judge.checks import (
    CheckFailure,
    CompileCounter,
    CompileError,
    GraphBreak,
    Recompile,
    assert_no_host_sync,
    assert_same,
    compile_one_graph,
    describe_tensor,
    expected_first,
)
from judge.checks.inplace import assert_updated_in_place
from judge.checks.serving import short_guard
from judge.checks.shapes import assert_no_unbacked_symbols
from judge.reports.i18n import T
from judge.reports.report import GraphBreakDiagnostic, RecompileDiagnostic

B, TMAX, D = 2, 12, 4
# Twelve steps: the slots in a scrambled order, one slot written twice.
POSITIONS = [0, 1, 2, 3, 7, 4, 11, 5, 6, 2, 9, 10]
WHAT = T("`append_and_read` under `fullgraph=True`", zh="`fullgraph=True` 下的 `append_and_read`")
TRACE_EXPLANATION = T("`int(pos)` / `pos[0]` read the position out of the tensor (a host sync); inside the graph "
                      "it is a data-dependent integer that cannot index the cache. Keep the position a tensor "
                      "(`index_copy_`, `scatter_`, or indexing with the tensor `pos`).",
                      zh="`int(pos)` / `pos[0]` 把位置从张量里读出来（一次主机同步）；在图里它是一个依赖数据的整数，"
                         "不能拿来给缓存做下标。让位置一直是张量（`index_copy_`、`scatter_`，或直接用张量 `pos` 做下标）。")
USER_CODE_MARKER = "from user code:"
APPEND = T.same("`append_and_read`")


# Other sizes than the ones above: nothing in the contract fixes B, Tmax or D.
OTHER_SIZES = (3, 20, 8)
OTHER_POSITIONS = [0, 19, 6, 13, 12, 1]
# Then a batch of one and a width of one (a squeeze loses them) with a cache length drawn per grading past 64 (a
# mask cut from a fixed 64-slot table), at positions past 64 and at its last slot.
LONG_TMAX = (65, 300)


def long_case() -> tuple[tuple[int, int, int], list[int]]:
    tmax = int(torch.randint(LONG_TMAX[0], LONG_TMAX[1] + 1, ()))
    return (1, tmax, 1), [tmax - 1, 0, 64, tmax // 2, 3]


def new_cache(dtype=torch.float32, sizes=(B, TMAX, D)):
    """A cache full of stale values: only slots <= pos may count."""
    return torch.randn(*sizes, dtype=dtype)


def step_inputs(p, dtype=torch.float32, sizes=(B, TMAX, D)):
    return torch.tensor([p]), torch.randn(sizes[0], 1, sizes[2], dtype=dtype)


def _tracing_failure(exc: CheckFailure) -> GraphBreak | None:
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
    where = (T("line {line} (`{text}`)", zh="第 {line} 行（`{text}`）", line=loc.line, text=loc.text) if loc
             else T("your code", zh="你的代码"))
    return GraphBreak(T("{what}: Dynamo could not trace {where}: {explanation}",
                        zh="{what}：Dynamo 无法追踪{where}：{explanation}", what=WHAT, where=where,
                        explanation=TRACE_EXPLANATION),
                      [GraphBreakDiagnostic(reason=reason, explanation=TRACE_EXPLANATION, location=loc,
                                            user_stack=stack)])


def one_graph(entry):
    cache, (pos, k) = new_cache(), step_inputs(3)
    try:
        return compile_one_graph(entry, cache, pos, k, what=WHAT, mutates_args=(0,))  # the cache is updated
    except GraphBreak as exc:
        diag = exc.diagnostics[0] if exc.diagnostics else None
        if diag is None or diag.location is None or "data-dependent" not in diag.reason:
            raise
        diag.set_text("explanation", TRACE_EXPLANATION)
        raise GraphBreak(T("{what}: graph break at line {line} (`{text}`): {explanation}",
                           zh="{what}：第 {line} 行（`{text}`）处发生 graph break：{explanation}", what=WHAT,
                           line=diag.location.line, text=diag.location.text, explanation=TRACE_EXPLANATION),
                         exc.diagnostics) from None
    except (remote.LearnerError, CompileError) as exc:  # some tracing failures are plain Python errors
        converted = _tracing_failure(exc)
        if converted is None:
            raise
        raise converted from None


def session(entry, backend="aot_eager"):
    """append_and_read compiled in the runner; each captured graph is compiled here with `backend` and run on
    this side's cache, so the in-place update must reach this side's tensor."""
    return entry.compile(fullgraph=True, what=APPEND, local_backend=backend,
                         mutates_args=(0,))  # the cache, and nothing else, is updated in place


def guards(compiled) -> list[str]:
    return [short_guard(r) for r in compiled.recompile_reasons]


SERVED_POSITIONS = len(POSITIONS)


def assert_one_graph_served(compiled, what=None, positions=SERVED_POSITIONS):
    """Every step ran the same captured graph (so it was checked here on every position)."""
    if compiled.frame_count > 1:
        found = guards(compiled)
        failed = (T(" The guard that failed: `{guard}`.", zh="失败的 guard：`{guard}`。", guard=found[0]) if found
                  else T.same(""))
        raise Recompile(T("{what} was compiled {n} times for {positions} positions; one compile must serve every "
                          "position.{failed}",
                          zh="{what} 为 {positions} 个位置编译了 {n} 次；一次编译必须服务所有位置。{failed}",
                          what=what or APPEND, n=compiled.frame_count, positions=positions, failed=failed),
                        [RecompileDiagnostic(compiles=compiled.frame_count, limit=1, guard_failures=found[:10])])


def run_steps(compiled, starter, check, dtype=torch.float32, sizes=(B, TMAX, D), positions=POSITIONS):
    """Step a compiled function and the original through `positions` on equal caches (the original keeps its own);
    at each step the original runs first, on copies of pos and k; `check` compares."""
    cache = new_cache(dtype, sizes)
    expected_cache = cache.clone()
    ptr = cache.data_ptr()

    def original(_cache, pos, k):  # the original steps its own cache (the learner's is only read for its shape)
        return starter.append_and_read(expected_cache, pos, k)

    for i, p in enumerate(positions, start=1):
        pos, k = step_inputs(p, dtype, sizes)
        before = cache.clone()
        expected, out = expected_first(original, compiled, cache, pos, k)
        case = T("step {i} of {n}: pos = tensor([{p}]), {cache}", zh="第 {i} 步（共 {n} 步）：pos = tensor([{p}])，{cache}",
                 i=i, n=len(positions), p=p, cache=describe_tensor('cache', cache))
        check(case, out, expected, cache, ptr, before, expected_cache)
    assert_one_graph_served(compiled, positions=len(positions))


def test_one_graph(entry):
    """torch.compile(append_and_read, fullgraph=True) captures one graph
    zh: torch.compile(append_and_read, fullgraph=True) 只捕获一张图
    """
    one_graph(entry)


def test_no_unbacked_symbols(entry):
    """The graph has no data-dependent (unbacked) sizes and no host sync
    zh: 图里没有依赖数据的（unbacked）大小，也没有主机同步
    """
    graphs = one_graph(entry).graphs
    what = T("the graph of `append_and_read`", zh="`append_and_read` 的图")
    assert_no_unbacked_symbols(graphs, what=what)
    assert_no_host_sync(graphs, what=what)


def test_one_compile_for_every_position(entry):
    """Twelve positions compile once (backend aot_eager)
    zh: 十二个位置只编译一次（backend aot_eager）
    """
    compiled = session(entry)
    cache = new_cache()
    for p in POSITIONS:
        compiled(cache, *step_inputs(p))  # (graphs run sealed: on copies; only the cache's changes come back)
    assert_one_graph_served(compiled)


def check_cache(case, out, expected, cache, ptr, before, expected_cache):
    assert_updated_in_place(cache, data_ptr=ptr, before=before, expected=expected_cache, case=case,
                            what=T.same("cache"))


def check_output(case, out, expected, *rest):
    assert_same(out, expected, case=case)


def check_both(*args):
    check_cache(*args)
    check_output(*args)


def test_cache_updated_in_place(entry, starter):
    """After every step (backend aot_eager) the caller's cache holds the new key, in its own storage
    zh: 每一步之后（backend aot_eager），调用者的缓存在它自己的存储里存着新的 key
    """
    run_steps(session(entry), starter, check_cache)


def test_same_outputs(entry, starter):
    """Every step (backend aot_eager) returns what the original returns
    zh: 每一步（backend aot_eager）的返回值都与原函数相同
    """
    run_steps(session(entry), starter, check_output)


def test_float64(entry, starter):
    """float64 caches and keys work the same
    zh: float64 的缓存和 key 同样正确
    """
    run_steps(session(entry), starter, check_both, dtype=torch.float64)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bfloat16", "float16"])
def test_half_precision(entry, starter, dtype):
    """bfloat16 and float16 caches and keys work the same, and the result keeps the cache's dtype
    zh: bfloat16 和 float16 的缓存和 key 同样正确，结果保持缓存的 dtype
    """
    run_steps(session(entry), starter, check_both, dtype=dtype)


def test_other_sizes(entry, starter):
    """Another batch, cache length and width (3, 20, 8) work the same, and so does (1, Tmax, 1) with a longer
    cache drawn per grading
    zh: 换一组批大小、缓存长度和宽度（3, 20, 8）同样正确；(1, Tmax, 1) 配上每次评测抽取的更长缓存也一样
    """
    run_steps(session(entry), starter, check_both, sizes=OTHER_SIZES, positions=OTHER_POSITIONS)
    sizes, positions = long_case()
    run_steps(session(entry), starter, check_both, sizes=sizes, positions=positions)


def test_inductor(entry, starter):
    """With a real Inductor compile: one compile, the cache updated in place, the same outputs
    zh: 用真正的 Inductor 编译：只编译一次，缓存原地更新，输出相同
    """
    counter = CompileCounter("inductor")  # the judge's own Inductor compiles of the captured graph
    run_steps(session(entry, counter), starter, check_both)
    if counter.frame_count > 1:
        raise Recompile(T("with Inductor, `append_and_read` was compiled {n} times for {positions} positions; one "
                          "compile must serve every position.",
                          zh="用 Inductor 时，`append_and_read` 为 {positions} 个位置编译了 {n} 次；一次编译必须服务所有位置。",
                          n=counter.frame_count, positions=len(POSITIONS)))
