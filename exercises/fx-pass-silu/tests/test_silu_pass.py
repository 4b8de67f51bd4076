"""Hidden tests for fx-pass-silu: the learner's pass runs on the post-AOTAutograd ATen graph of the grader's models.

The grader builds each ATen graph here and sends it (as IR, without its inputs) to the runner, where
`silu_pass` edits it; the graph it returns is rebuilt here from the allowlist, counted and run on the
grader's inputs. The runner is asked what running its own returned module does only to explain a failure
(a forgotten gm.recompile()).
"""

import torch
from _silu_models import Block, Gating, OtherMuls, ResidualSilu, SharedSigmoid, SigmoidTimesX, XTimesSigmoid, make
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from judge import remote
from judge.checks import WrongAnswer, assert_same, describe_tensor
from judge.checks.fx_passes import (
    apply_pass,
    apply_remote_pass,
    aten_graph,
    dead_nodes,
    executed_ops,
    graph_diagnostic,
    op_counts,
)

SILU, SIGMOID, MUL = "aten.silu.default", "aten.sigmoid.default", "aten.mul.Tensor"
WATCHED = (SILU, SIGMOID, MUL)


def rewritten(entry, cls, dtype=torch.float32):
    """(model, graph before, graph after the learner's pass, the graph's real inputs, x)."""
    model = make(cls, dtype)
    x = torch.randn(4, 16, dtype=dtype)
    gm, args = aten_graph(model, x)
    before = op_counts(gm)
    after = apply_pass(entry, gm, name="silu_pass(gm)")
    return model, before, after, args, x


def describe(counts) -> str:
    return ", ".join(f"{counts.get(op, 0)} {op.split('.')[1]}" for op in WATCHED)


def expect_counts(after, expected: dict, pattern: str) -> None:
    """Fail with the graph shown unless nothing is left unused and the watched ops have the expected counts."""
    dead = dead_nodes(after)
    if dead:
        raise WrongAnswer(f"{pattern}: your pass left {', '.join(dead)} in the graph with no users; erase the "
                          "nodes you replace (graph.erase_node) or call graph.eliminate_dead_code()",
                          [graph_diagnostic(after, highlight=dead)])
    counts = op_counts(after)
    got = {op: counts.get(op, 0) for op in WATCHED}
    if got == expected:
        return
    others = sorted(t for t in counts if "silu" in t and t != SILU)
    message = f"{pattern}: after your pass the graph has {describe(got)}; expected {describe(expected)}"
    if others:
        message += (f". It calls {', '.join(others)}: in an ATen graph insert torch.ops.aten.silu.default "
                    "(an OpOverload, like every other node there)")
    raise WrongAnswer(message, [graph_diagnostic(after)])


def expect_same(after, args, model, x, pattern: str) -> None:
    assert_same(after(*args)[0], model(x).detach(), case=f"{pattern}, {describe_tensor('x', x)}")


def test_x_times_sigmoid(entry):
    """mul(x, sigmoid(x)) becomes one aten.silu(x)"""
    model, _, after, args, x = rewritten(entry, XTimesSigmoid)
    expect_counts(after, {SILU: 1, SIGMOID: 0, MUL: 0}, "h * torch.sigmoid(h)")
    expect_same(after, args, model, x, "h * torch.sigmoid(h)")


def test_sigmoid_times_x(entry):
    """mul(sigmoid(x), x), the other operand order, becomes aten.silu(x) too"""
    model, _, after, args, x = rewritten(entry, SigmoidTimesX)
    expect_counts(after, {SILU: 1, SIGMOID: 0, MUL: 0}, "torch.sigmoid(h) * h")
    expect_same(after, args, model, x, "torch.sigmoid(h) * h")


def test_gating_product_kept(entry):
    """A gate a * sigmoid(b) with a different tensor b is left alone"""
    model, _, after, args, x = rewritten(entry, Gating)
    expect_counts(after, {SILU: 0, SIGMOID: 1, MUL: 1}, "a * torch.sigmoid(b)")
    expect_same(after, args, model, x, "a * torch.sigmoid(b)")


def test_shared_sigmoid_kept(entry):
    """x * sigmoid(x) is left alone when the sigmoid has another user (the rewrite would save nothing)"""
    model, _, after, args, x = rewritten(entry, SharedSigmoid)
    expect_counts(after, {SILU: 0, SIGMOID: 1, MUL: 1}, "s = torch.sigmoid(h); h * s + s")
    expect_same(after, args, model, x, "s = torch.sigmoid(h); h * s + s")


def test_other_muls_untouched(entry):
    """Products with Python numbers and other products are left alone"""
    model, before, after, args, x = rewritten(entry, OtherMuls)
    expect_counts(after, {op: before.get(op, 0) for op in WATCHED}, "sigmoid(h) * 2.0 + h * 0.5 + h * h")
    expect_same(after, args, model, x, "sigmoid(h) * 2.0 + h * 0.5 + h * h")


def test_rewritten_graph_runs(entry):
    """The module your pass returns runs the rewritten graph (2 silu, no stale code)"""
    model = make(Block)
    x = torch.randn(4, 16)
    gm, args = aten_graph(model, x)
    after, returned = apply_remote_pass(entry, gm, name="silu_pass(gm)")
    expected = {SILU: 2, SIGMOID: 2, MUL: 3}
    in_graph = {op: op_counts(after).get(op, 0) for op in WATCHED}
    if in_graph != expected:
        raise WrongAnswer(f"Block model: after your pass the graph has {describe(in_graph)}; expected "
                          f"{describe(expected)}", [graph_diagnostic(after)])
    # The module stays in the runner: run it there (on other values of the same shapes) and count what ran.
    # This can only fail the check; the numbers below come from the returned graph, run here.
    ran = remote.call(remote.public("executed_ops"), returned, *remote.example_like(tuple(args)),
                      what="the module silu_pass returned")
    if not isinstance(ran, dict):
        raise remote.Protocol("malformed operation counts")
    got = {op: ran.get(op, 0) for op in WATCHED}
    if got != expected:
        raise WrongAnswer(f"running the module your pass returned executed {describe(got)}, although its graph "
                          f"has {describe(in_graph)}: gm.forward still runs the old code. After editing gm.graph, "
                          "call gm.recompile() so that gm.forward is regenerated from it.",
                          [graph_diagnostic(after)])
    expect_same(after, args, model, x, "Block")


def test_in_compile_pipeline(entry):
    """As a pass inside torch.compile (aot_autograd forward compiler), the results equal eager, float32 and float64"""
    ran = []

    def forward_compiler(gm, example_inputs):
        rewritten_gm = apply_pass(entry, gm, name="silu_pass(gm)")   # the pass runs in the runner, the graph here

        def run(*args):  # count the ops the compiled model really runs
            output, counts = executed_ops(rewritten_gm, *args)
            ran.append(counts)
            return output

        return make_boxed_func(run)

    for dtype in (torch.float32, torch.float64):
        torch._dynamo.reset()
        model = make(Block, dtype)
        compiled = torch.compile(model, backend=aot_autograd(fw_compiler=forward_compiler), fullgraph=True)
        for rows in (4, 1):
            x = torch.randn(rows, 16, dtype=dtype)
            with torch.no_grad():
                output = compiled(x)
            silus = ran[-1].get(SILU, 0) if ran else 0
            if silus != 2:
                raise WrongAnswer(f"inside torch.compile the Block model ran {silus} aten.silu, expected 2")
            assert_same(output, model(x).detach(), case=f"Block, {describe_tensor('x', x)}")


def test_x_with_other_users(entry):
    """h * sigmoid(h) becomes aten.silu(h) also when h has other users (a residual h * sigmoid(h) + h)"""
    model, _, after, args, x = rewritten(entry, ResidualSilu)
    expect_counts(after, {SILU: 1, SIGMOID: 0, MUL: 0}, "h * torch.sigmoid(h) + h")
    expect_same(after, args, model, x, "h * torch.sigmoid(h) + h")
