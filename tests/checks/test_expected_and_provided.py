"""judge.checks.expected and judge.checks.provided: expected values first; results through provided operators."""

import pytest
import torch

from judge.checks import (
    CheckFailure,
    Provided,
    WrongAnswer,
    assert_result_flows_through,
    assert_same,
    assert_same_result,
    expected_first,
)
from judge.checks.autograd import assert_same_value_and_grads
from judge.reports.report import Verdict


def original(x):
    return x * 2


def test_expected_is_computed_first_on_untouched_copies():
    order = []

    def expected_fn(x):
        order.append("expected")
        return original(x)

    def learner(x):  # runs second and rewrites its input so that a late expected value would agree
        order.append("learner")
        x.zero_()
        return torch.zeros_like(x)

    x = torch.ones(3)
    with pytest.raises(WrongAnswer):
        assert_same_result(learner, expected_fn, x, case="x")
    assert order == ["expected", "learner"]


def test_the_expected_value_is_a_copy_the_learner_cannot_reach():
    x = torch.ones(2)
    expected, actual = expected_first(lambda x: x, lambda x: x.add_(5), x)
    assert torch.equal(expected, torch.ones(2)) and torch.equal(actual, torch.full((2,), 6.0))


def test_gradients_are_compared_with_grad_mode_on_whatever_the_process_was_in():
    s = torch.tensor([-1.0, -2.0])
    with torch.no_grad():  # as a graph that left grad mode off would have left it
        with pytest.raises(WrongAnswer, match="gradient of s"):
            assert_same_value_and_grads(lambda s: torch.where(s.sum() > 0, s.sum().sqrt(), -s.sum()),
                                        lambda s: -s.sum(), s, case="t < 0", names=["s"])


def test_no_gradient_on_the_expected_side_is_never_a_pass():
    with pytest.raises(CheckFailure) as info:
        assert_same_value_and_grads(lambda s: s.sum().detach(), lambda s: s.sum().detach(), torch.ones(2),
                                    case="detached", names=["s"])
    assert info.value.verdict is Verdict.INTERNAL_ERROR


KERNEL = Provided(torch.nn.functional.gelu, name="`the op`")


def uses_the_op(x):
    return KERNEL(x) + 1


def decoy(x):  # calls the op, then takes its numbers from elsewhere
    return torch.lerp(KERNEL(x), torch.nn.functional.gelu(x), 1.0) + 1


def constant_from_a_first_call():
    cached = {}

    def run(x):
        cached.setdefault("value", KERNEL(x).clone())
        return cached["value"] + 1
    return run


def test_an_output_computed_from_the_op_follows_its_replacement():
    x = torch.randn(4)
    assert_result_flows_through(KERNEL, uses_the_op, uses_the_op, x, case="x")


@pytest.mark.parametrize("learner", [decoy, constant_from_a_first_call()], ids=["discarded", "constant"])
def test_a_decoy_fails(learner):
    x = torch.randn(4)
    learner(x)  # a constant taken from an earlier call
    with pytest.raises(WrongAnswer, match="replaced by another function"):
        assert_result_flows_through(KERNEL, learner, uses_the_op, x, case="x")


def test_the_replacement_is_undone_and_patches_the_expected_side_too():
    import types

    module = types.SimpleNamespace(kernel=torch.sin)
    provided = Provided(torch.sin, name="k", patch=[(module, "kernel")])
    with provided.replaced(lambda x: x * 0 + 7):
        assert torch.equal(module.kernel(torch.zeros(1)), torch.full((1,), 7.0))
        assert torch.equal(provided(torch.zeros(1)), torch.full((1,), 7.0))
    assert module.kernel is torch.sin and provided.impl is torch.sin


def test_a_replacement_that_changes_nothing_proves_nothing():
    with pytest.raises(CheckFailure) as info:
        assert_result_flows_through(KERNEL, lambda x: x, lambda x: x, torch.ones(2), case="x")
    assert info.value.verdict is Verdict.INTERNAL_ERROR


def test_the_replacement_is_drawn_from_the_seed():
    x = torch.randn(64)
    first, again, other = (KERNEL.replacement(seed)(x) for seed in (1, 1, 2))
    assert torch.equal(first, again) and not torch.equal(first, other)
    moved = (first - torch.nn.functional.gelu(x)).abs()
    tolerance = 1e-5 + 1.3e-6 * torch.nn.functional.gelu(x).abs()
    assert bool((moved > tolerance).all())  # every element moves by more than the check's tolerance


def imitates_a_formula(x):  # returns its own answer, and the judge's former replacement formula where the op differs
    own = torch.nn.functional.gelu(x)
    return torch.where((KERNEL(x) - own).abs() > 1e-4, own * 1.5 - torch.sin(own) + 0.25, own) + 1


def passes_disagreement_through(x):  # its own answer, the op's only where the two differ by more than 1e-3
    own, op = torch.nn.functional.gelu(x), KERNEL(x)
    return torch.where((op - own).abs() > 1e-3, op, own) + 1


@pytest.mark.parametrize("learner", [imitates_a_formula, passes_disagreement_through],
                         ids=["imitates", "passes-through"])
@pytest.mark.parametrize("seed", range(5))
def test_a_graph_that_detects_the_probing_run_fails(learner, seed):
    x = torch.randn(48)
    assert_same(learner(x), uses_the_op(x), case="ordinary run")  # the ordinary numbers pass
    with pytest.raises(WrongAnswer, match="replaced by another function"):
        assert_result_flows_through(KERNEL, learner, uses_the_op, x, case="x", by=KERNEL.replacement(seed))
