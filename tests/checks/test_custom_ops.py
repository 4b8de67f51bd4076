"""judge.checks.custom_ops: finding namespaced ops in a captured graph and explaining opcheck failures."""

import pytest
import torch

from judge.checks import WrongAnswer, compile_one_graph
from judge.checks.custom_ops import assert_calls_custom_op, assert_opcheck, custom_op_nodes


@torch.library.custom_op("practicetest::double", mutates_args=())
def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@double.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("practicetest::double_float32_fake", mutates_args=())
def double_float32_fake(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@double_float32_fake.register_fake
def _(x):
    return torch.empty(x.shape)


@torch.library.custom_op("practicetest::identity_alias", mutates_args=())
def identity_alias(x: torch.Tensor) -> torch.Tensor:
    return x


@identity_alias.register_fake
def _(x):
    return torch.empty_like(x)


torch.library.define("practicetest::triple", "(Tensor x) -> Tensor")


@torch.library.impl("practicetest::triple", "cpu")
def _(x):
    return x * 3


@torch.library.register_fake("practicetest::triple")
def _(x):
    return torch.empty_like(x)


def graph_of(fn):
    torch._dynamo.reset()
    return compile_one_graph(fn, torch.randn(3, 4)).graphs[0]


def test_finds_ops_called_through_the_def_or_the_packet():
    gm = graph_of(lambda x: double(x) + torch.ops.practicetest.triple(x))
    ops = [op for _, op in custom_op_nodes(gm, "practicetest")]
    assert [str(op) for op in ops] == ["practicetest.double.default", "practicetest.triple.default"]
    assert custom_op_nodes(gm, "ext") == []


def test_no_op_in_the_namespace_is_a_wrong_answer_naming_the_other_namespace():
    gm = graph_of(lambda x: double(x) + 1)
    with pytest.raises(WrongAnswer, match=r"no operator in the `ext` namespace.*practicetest\.double"):
        assert_calls_custom_op(gm, "ext")
    with pytest.raises(WrongAnswer, match="no operator in the `ext` namespace"):
        assert_calls_custom_op(graph_of(lambda x: torch.relu(x)), "ext")


def test_opcheck_passes_a_correct_op_on_every_dtype_and_empty():
    for x in (torch.randn(3, 4), torch.randn(2, 5, dtype=torch.float64), torch.randn(0, 4)):
        assert_opcheck(torch.ops.practicetest.double.default, (x,), case="x")


def test_a_fake_that_drops_the_dtype_fails_only_on_float64():
    op = torch.ops.practicetest.double_float32_fake.default
    assert_opcheck(op, (torch.randn(3, 4),), case="float32")
    with pytest.raises(WrongAnswer, match=r"float64 input: `test_faketensor` failed: the fake implementation"):
        assert_opcheck(op, (torch.randn(3, 4, dtype=torch.float64),), case="float64 input")


def test_an_output_aliasing_its_input_fails_the_schema_test():
    with pytest.raises(WrongAnswer, match="`test_schema` failed: the op does something its schema does not declare"):
        assert_opcheck(torch.ops.practicetest.identity_alias.default, (torch.randn(3),), case="x")
