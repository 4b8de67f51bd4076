"""The runner's answer to `tamper` (what the learner's code changed globally) as the verifier words it."""

import pytest

from judge.i18n import T
from judge.verifier import tamper_changes


def test_a_change_said_in_english_only_is_named_as_code():
    """A runner that sends no Chinese (an older or lying runner) still fails the check with its words."""
    [change] = tamper_changes({"changes": ["torch._dynamo.config.cache_size_limit = 1"]})
    assert isinstance(change, T)
    assert change.render("en") == "`torch._dynamo.config.cache_size_limit = 1`"


def test_a_change_said_in_both_languages_keeps_both():
    [change] = tamper_changes({"changes": ["grad mode turned off"], "changes_zh": ["梯度模式被关闭"]})
    assert change.render("en") == "grad mode turned off"
    assert change.render("zh") == "梯度模式被关闭"


@pytest.mark.parametrize("answer, expected", [
    ({"changes": "not a list"}, ["(malformed answer)"]),
    ({"changes": ["a`b"]}, ["`a'b`"]),  # a backtick cannot end the code span early
    ({"changes": [f"c{i}" for i in range(9)]}, [f"`c{i}`" for i in range(5)]),  # at most five
    ({"changes": ["x", "y"], "changes_zh": ["只有一个"]}, ["`x`", "`y`"]),  # Chinese that does not match: ignored
    ({}, []),
])
def test_malformed_or_partial_answers_are_worded_not_raised(answer, expected):
    assert [c.render("en") for c in tamper_changes(answer)] == expected
