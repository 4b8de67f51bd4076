"""judge.checks.instrument: what a rebuilt graph ran, through torch.cond and while_loop."""

import pytest
import torch
from torch._higher_order_ops import while_loop

from judge.checks.instrument import executed_ops, executed_work, graph_text, opaque, run_counting
from judge.shared import ir


def heavy(x):
    return (torch.tanh(x) * 2).sum(1)


def light(x):
    return x.sum(1)


def branchy(x, flag):
    y = torch.cond(flag.sum() > 0, heavy, light, (x,))
    return while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2), (torch.zeros((), dtype=torch.int64), y))


@pytest.fixture(scope="module")
def rebuilt():
    """branchy's Dynamo graph, through the IR, as the verifier rebuilds a graph from the runner."""
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm

    torch._dynamo.reset()
    torch.compile(branchy, backend=keep, fullgraph=True)(torch.randn(3, 4), torch.ones(1))
    return ir.from_ir(ir.to_ir(graphs[0]))


@pytest.mark.parametrize("sign, taken, tanh_runs", [(1.0, "cond_true_0", 1), (-1.0, "cond_false_0", 0)])
def test_run_counting_enters_only_the_taken_branch_and_counts_each_loop_turn(rebuilt, sign, taken, tanh_runs):
    x = torch.randn(3, 4)
    run = run_counting(rebuilt, torch.full((1,), sign), x)
    assert run.branches[taken] == 1 and sum(run.branches[b] for b in ("cond_true_0", "cond_false_0")) == 1
    assert run.ran("tanh") == tanh_runs and run.nodes["torch.ops.higher_order.cond"] == 1
    assert run.loop_turns["while_loop"] == 3 and run.branches["body_fn_0"] == 3
    torch.testing.assert_close(run.output[1], branchy(x, torch.full((1,), sign))[1])


def test_run_counting_names_operators_as_the_graph_calls_them(rebuilt):
    run = run_counting(rebuilt, torch.ones(1), torch.randn(3, 4))
    assert "operator.mul" in run.nodes and "Tensor.sum" in run.nodes and "torch.tanh" in run.nodes


@pytest.mark.parametrize("through", ["rebuilt graph", "eager torch.cond"])
def test_executed_ops_counts_aten_operators_inside_cond_and_while_loop(rebuilt, through):
    x = torch.randn(3, 4)
    for sign, tanh_runs in ((1.0, 1), (-1.0, 0)):
        flag = torch.full((1,), sign)
        _, ran = executed_ops(rebuilt, flag, x) if through == "rebuilt graph" else executed_ops(branchy, x, flag)
        assert ran["aten.tanh.default"] == tanh_runs
        assert ran["aten.add.Tensor"] == 3  # the loop's counter, once per turn


def test_graph_text_shows_the_branches_as_submodules(rebuilt):
    text = graph_text(rebuilt)
    assert "torch.ops.higher_order.cond(" in text and "class cond_true_0" in text and "class body_fn_0" in text


def with_scan(x):
    from torch._higher_order_ops.scan import scan

    def step(carry, row):
        new = carry + torch.tanh(row)
        return new, new.clone()
    return scan(step, torch.zeros(x.shape[1]), x)


def with_map(x):
    from torch._higher_order_ops.map import map as hop_map

    return hop_map(lambda row: torch.tanh(row) * 2, x)


@pytest.mark.parametrize("fn, expected", [(with_scan, lambda x: torch.tanh(x).cumsum(0)),
                                          (with_map, lambda x: torch.tanh(x) * 2)], ids=["scan", "map"])
def test_scan_and_map_bodies_count_once_per_trip(fn, expected):
    """Work inside a scan's or a map's body is counted as often as it runs (one tanh per row of five), and the
    operator still computes what it computes."""
    output, ran = executed_ops(fn, x := torch.randn(5, 4))
    assert ran["aten.tanh.default"] == 5 and opaque(ran) == []
    assert torch.allclose(torch.utils._pytree.tree_leaves(output)[-1], expected(x), atol=1e-6)


def test_a_body_the_counter_cannot_enter_is_named_never_free():
    hints, body = torch.ops.higher_order.hints_wrapper, torch.fx.symbolic_trace(torch.nn.Tanh())
    _, ran = executed_ops(lambda x: hints(body, (x,), {}, hints={"note": 1}), torch.randn(3))
    assert opaque(ran) == ["hints_wrapper"] and ran["aten.tanh.default"] == 0


def test_work_is_counted_whatever_the_operators_are_called():
    """A matmul spelled as a broadcast multiply and a sum costs what `mm` costs, not nothing; an elementwise op its
    elements; work inside a map's body counts per slice."""
    h, w = torch.randn(6, 16), torch.randn(16, 16)
    _, ran_mm, mm = executed_work(torch.mm, h, w)
    spelled, ran, spelled_work = executed_work(lambda h, w: (h.unsqueeze(-1) * w).sum(-2), h, w)
    assert torch.allclose(spelled, h @ w, atol=1e-5) and "aten.mm.default" not in ran
    assert mm == 6 * 16 * 16 and spelled_work >= mm
    assert executed_work(torch.tanh, h)[2] == h.numel()
    assert executed_work(with_map, torch.randn(5, 4))[2] >= 5 * 4
