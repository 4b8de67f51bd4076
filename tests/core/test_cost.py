"""The cost measure (judge/costs/measure.py): what eager mode dispatches and moves, what Inductor makes of a graph."""

import pytest
import torch

from judge.costs.measure import Traffic, compiled_cost, cost_of, eager_cost, relative_standard_error, tensor_bytes
from judge.costs.spec import CostSpec, spec_for
from judge.parent.exercise import load_exercise
from judge.shared.paths import EXERCISES_DIR

F32 = 4


def test_a_broadcast_dim_counts_once():
    w = torch.randn(64)
    assert tensor_bytes(w) == 64 * F32
    assert tensor_bytes(w.expand(8, 64)) == 64 * F32  # stride 0: the same 64 elements
    assert tensor_bytes(torch.empty(0, 3)) == 0


@pytest.mark.parametrize("fn, ops, views, read, written", [
    # x * w: reads x [8, 64] and w [64], writes [8, 64]
    (lambda x, w: x * w, 1, 0, (512 + 64) * F32, 512 * F32),
    # a view moves nothing and launches nothing
    (lambda x, w: x.view(64, 8).t(), 0, 2, 0, 0),
    # in place: x is read and written once each, the returned alias not counted again
    (lambda x, w: x.mul_(2), 1, 0, 512 * F32, 512 * F32),
    # out=: the out argument is written, not read
    (lambda x, w: torch.mul(x, 2, out=torch.empty_like(x)), 2, 0, 512 * F32, 512 * F32),
    # a row reduction reads the row and writes one value per row
    (lambda x, w: x.sum(-1), 1, 0, 512 * F32, 8 * F32),
])
def test_eager_traffic(fn, ops, views, read, written):
    cost = eager_cost(fn, [torch.randn(8, 64), torch.randn(64)])
    assert (cost.ops, cost.views, cost.bytes_read, cost.bytes_written) == (ops, views, read, written)


def test_eager_cost_runs_on_copies():
    x = torch.ones(4)
    eager_cost(lambda t: t.add_(1), [x])
    assert torch.equal(x, torch.ones(4))


def test_traffic_names_each_operator():
    with Traffic() as traffic:
        torch.relu(torch.randn(3) + 1)
    assert [n.split(".")[1] for n in traffic.names] == ["randn", "add", "relu"]


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


@torch.compiler.disable
def _vendor(x):
    return x.pow(2).mean(-1, keepdim=True)


def broken(x, w):
    return torch.nn.functional.silu(x * torch.rsqrt(_vendor(x) + 1e-6) * w)


def test_one_fused_kernel_reads_the_input_once():
    x, w = torch.randn(8, 64), torch.randn(64)
    eager, compiled = cost_of(rms, [x, w])
    assert eager.ops == 6 and compiled.kernels == ["cpp_fused_add_mean_mul_pow_rsqrt_0"] and not compiled.extern_calls
    # Inductor's estimate: x read once, w once, the output written once
    assert compiled.bytes_estimate == (512 + 64 + 512) * F32
    assert compiled.eager_ops_outside == 0 and eager.bytes > 3 * compiled.bytes
    assert cost_of(rms, [torch.zeros(8, 64), torch.zeros(64)]) is not None  # same layout: measured once
    assert cost_of(rms, [x, w])[1] is compiled


def layers(x, w):
    for i in range(w.shape[0]):
        x = x + torch.tanh(x @ w[i])
    return x


def test_an_extern_call_counts_the_slice_it_reads_not_the_whole_weight():
    x, w = torch.randn(4, 32), torch.randn(3, 32, 32)
    with torch._inductor.config.patch(fx_graph_cache=False):  # an entry written before would keep its own sum
        compiled = compiled_cost(layers, [x, w])
    assert compiled.extern_calls == ["extern_kernels.mm"] * 3
    matmuls = 3 * (4 * 32 + 32 * 32 + 4 * 32) * F32  # x, w[i] and the product: w[i] only, never all of w
    # each of the fused kernels between them reads its x and the product once and writes the new x
    assert matmuls < compiled.bytes_estimate <= matmuls + 3 * 3 * 4 * 32 * F32
    assert compiled.bytes_estimate < eager_cost(layers, [x, w]).bytes  # the fusion saved the tanh's round trip


def test_after_a_graph_break_the_eager_part_is_counted():
    x, w = torch.randn(8, 64), torch.randn(64)
    eager = eager_cost(broken, [x, w])
    compiled = compiled_cost(broken, [x, w], eager=eager)
    assert compiled.eager_ops_outside == 2  # pow and mean ran eagerly inside the disabled function
    assert compiled.eager_bytes_outside == (512 + 512) * F32 + (512 + 8) * F32
    assert compiled.bytes == compiled.bytes_estimate + compiled.eager_bytes_outside
    # What compiling cost, counted here: the frame broken by the disabled call and the frame that resumes after it
    # (the one graph), each with its guards; the seconds are shown and never compared.
    assert compiled.graphs == 1 and compiled.compile is not None and compiled.compile.frames == 2
    assert compiled.compile.guards and compiled.compile.guards >= 2
    assert compiled.compile.dynamo_s is not None and compiled.compile.dynamo_s >= 0 and compiled.compile.inductor_s > 0


def test_a_rebuilt_graph_has_no_dynamo_figures_of_its_own():
    """The learner's graph was traced by Dynamo in the learner's process: the verifier's retrace of the rebuilt graph
    is not that, so its frames, guards and Dynamo seconds stay empty; its graphs and Inductor's seconds are counted."""
    x, w = torch.randn(8, 64), torch.randn(64)
    gm = torch.fx.symbolic_trace(lambda x, w: (torch.nn.functional.silu(x * w),))
    compiled = compiled_cost(gm, [x, w])
    assert compiled.graphs == 1 and compiled.compile is not None
    assert (compiled.compile.frames, compiled.compile.guards, compiled.compile.dynamo_s) == (None, None, None)


def counts(compiled) -> dict:
    """The compiled figures without the seconds (shown, never compared)."""
    return compiled.model_dump(exclude={"compile": {"dynamo_s", "inductor_s"}})


def test_relative_standard_error():
    assert relative_standard_error([1.0]) == 0.0
    assert relative_standard_error([1.0, 1.0, 1.0]) == 0.0
    assert 0 < relative_standard_error([1.0, 2.0, 3.0]) < 0.5


def test_cost_inputs_are_the_same_every_time():
    spec = CostSpec(inputs=[{"name": "x", "shape": [4, 8]}, {"name": "n", "shape": [4], "dtype": "int64",
                                                             "low": 0, "high": 3}], dtype="bfloat16")
    a, b = spec.make_inputs(), spec.make_inputs()
    assert all(torch.equal(p, q) for p, q in zip(a, b))
    assert a[0].dtype == torch.bfloat16 and a[1].dtype == torch.int64 and int(a[1].max()) <= 3
    assert spec.describe() == "x: bfloat16[4, 8], n: int64[4]"


def test_on_demand_inputs_come_from_the_contract():
    exercise = load_exercise(EXERCISES_DIR / "fuse-rmsnorm-silu")
    assert spec_for(exercise) == exercise.cost  # its own [cost]
    assert spec_for(exercise, False) is None
    bare = exercise.model_copy(update={"cost": None})
    assert spec_for(bare) is None  # no [cost]: nothing measured unless asked
    asked = spec_for(bare, True)
    assert asked.describe() == "x: float32[5, 40], w: float32[40]"  # the contract's largest sizes, first dtype


def test_a_checks_own_inductor_compile_gives_the_cost_section_its_figures(monkeypatch):
    """recording_inductor: the hidden test's compile of a rebuilt graph records what cost_of would measure, so the
    cost section compiles nothing again; the figures are those of a compile of its own."""
    import torch._inductor.compile_fx as compile_fx_module
    from torch._inductor.utils import run_and_get_code

    from judge.costs import measure as cost

    def rms_norm(x, w):  # a graph of its own (cost_of keys on the graph's code)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w

    gm = torch.fx.symbolic_trace(rms_norm)
    values = [torch.randn(8, 64), torch.randn(64)]
    fresh = compiled_cost(gm, values)
    cost._MEASURED.clear()
    output, codes = run_and_get_code(torch.compile(gm, backend=cost.recording_inductor(gm, values)), *values)
    assert torch.allclose(output, gm(*values)) and codes  # the check still gets its code and result
    compiles = []
    real = compile_fx_module.compile_fx
    monkeypatch.setattr(compile_fx_module, "compile_fx", lambda *a, **k: compiles.append(1) or real(*a, **k))
    eager, compiled = cost_of(gm, [torch.zeros(8, 64), torch.zeros(64)])
    assert compiles == [] and counts(compiled) == counts(fresh) and eager == eager_cost(gm, values)


def test_the_reference_and_starter_figures_travel_to_the_next_job():
    """judge.costs.memo: a verifier's measured reference/starter figures go into the next job of that version."""
    from judge.costs import memo as cost_memo
    from judge.parent.job import make_jobs
    from judge.reports.report import CompiledCost, CostFigures, CostSection, EagerCost

    exercise = load_exercise(EXERCISES_DIR / "fuse-rmsnorm-silu")
    cost_memo.forget()
    _, first = make_jobs(exercise, "x = 1\n")
    assert first.cost and first.cost_known is None
    measured = CostFigures(who="reference", eager=EagerCost(ops=6, bytes_read=8, bytes_written=8),
                           compiled=CompiledCost(bytes_estimate=4352))
    section = CostSection(inputs="x", torch_version="2.13.0", figures=[
        CostFigures(who="learner", eager=EagerCost(ops=1, bytes_read=8, bytes_written=8),
                    compiled=CompiledCost(bytes_estimate=8)),
        measured,
        CostFigures(who="starter", unavailable="could not be measured")])
    cost_memo.remember(exercise, first.cost, section)
    _, second = make_jobs(exercise, "x = 2\n")
    assert second.cost_known == {"torch_version": "2.13.0", "figures": [measured.model_dump(mode="json")]}
    _, other_inputs = make_jobs(exercise, "x = 2\n", measure_cost=False)
    assert other_inputs.cost_known is None
    cost_memo.forget()


def test_timing_a_learners_graph_is_sealed(monkeypatch):
    """learner_timed_cost runs the timing sealed: on copies (each batch on fresh clones), and a graph whose run
    leaves the process changed (here: grad mode switched off) fails as FORBIDDEN, with the state put back."""
    from judge.checks.failures import Forbidden
    from judge.costs import checks as cost_checks

    seen = []

    def fake_timed_cost(gm, make_args, **options):  # measure_time needs a GPU: the timing's own calls, on CPU
        args = make_args()
        seen.append(args)
        gm(*args)
        return "timed"

    monkeypatch.setattr(cost_checks, "timed_cost", fake_timed_cost)
    x = torch.randn(4)
    before = x.clone()
    graph = torch.fx.symbolic_trace(lambda t: t.add_(1))
    assert cost_checks.learner_timed_cost(graph, [x]) == "timed"
    assert seen[0][0] is not x and torch.equal(x, before)  # the caller's tensor was never the one timed

    class SwitchesGradOff(torch.nn.Module):
        def forward(self, t):
            torch._C._set_grad_enabled(False)
            return t * 2

    with pytest.raises(Forbidden):
        cost_checks.learner_timed_cost(SwitchesGradOff(), [torch.randn(4)])
    assert torch.is_grad_enabled()
