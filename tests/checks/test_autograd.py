"""judge.checks.autograd: outputs and gradients compared with an expected function."""

import pytest
import torch

from judge.checks import WrongAnswer
from judge.checks.autograd import assert_same_value_and_grads, value_and_grads


def original(s):
    t = s.sum()
    return torch.sqrt(t) if t > 0 else -t


def naive_where(s):
    t = s.sum()
    return torch.where(t > 0, torch.sqrt(t), -t)


def test_value_and_grads_leaves_the_input_alone():
    s = torch.tensor([1.0, 3.0])
    out, (grad,) = value_and_grads(lambda v: v * v, s)
    assert not s.requires_grad and s.grad is None
    assert torch.equal(out, torch.tensor([1.0, 9.0])) and torch.equal(grad, torch.tensor([2.0, 6.0]))


def test_equal_outputs_and_gradients_pass():
    assert_same_value_and_grads(naive_where, original, torch.tensor([0.5, 1.0]), case="t > 0", names=["s"])


def test_a_nan_gradient_with_equal_outputs_fails_on_the_gradient():
    with pytest.raises(WrongAnswer, match="gradient of s") as info:
        assert_same_value_and_grads(naive_where, original, torch.tensor([-0.5, -1.0]), case="t < 0", names=["s"])
    assert "nan" in str(info.value.message)


def test_no_gradient_at_all_fails():
    with pytest.raises(WrongAnswer, match="gradient of s"):
        assert_same_value_and_grads(lambda s: original(s).detach() + 0 * s.sum().detach(), original,
                                    torch.tensor([0.5, 1.0]), case="detached", names=["s"])
