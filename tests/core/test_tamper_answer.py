"""The verifier's reading of a runner's `tamper` answer (untrusted data)."""

import pytest

from judge.verifier_side.verifier import tamper_problems


def test_a_change_without_its_chinese_text_is_shown_raw_in_both_languages():
    """It was an AttributeError (a helper that had been renamed) that turned the grading into an internal error."""
    problems = tamper_problems({"changes": ["torch._dynamo.config.cache_size_limit: 8 -> 1000"]})
    assert [p.render(lang) for p in problems for lang in ("en", "zh")] == \
        ["`torch._dynamo.config.cache_size_limit: 8 -> 1000`"] * 2


def test_a_change_with_its_chinese_text_is_shown_in_each_language():
    problems = tamper_problems({"changes": ["grad mode switched off"], "changes_zh": ["梯度模式被关闭"]})
    assert (problems[0].render("en"), problems[0].render("zh")) == ("grad mode switched off", "梯度模式被关闭")


def test_at_most_five_changes_each_cut_short_and_a_malformed_answer_says_so():
    problems = tamper_problems({"changes": ["x" * 1000] * 9, "changes_zh": "not a list"})
    assert len(problems) == 5 and all(len(p.render("en")) <= 310 for p in problems)
    assert [p.render("en") for p in tamper_problems({"changes": "oops"})] == ["(malformed answer)"]


@pytest.mark.parametrize("answer, expected", [
    ({"changes": ["a`b"]}, ["`a'b`"]),  # a backtick cannot end the code span early
    ({"changes": ["x", "y"], "changes_zh": ["只有一个"]}, ["`x`", "`y`"]),  # Chinese that does not match: ignored
    ({}, []),
])
def test_partial_answers_are_worded_not_raised(answer, expected):
    assert [c.render("en") for c in tamper_problems(answer)] == expected
