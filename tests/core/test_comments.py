"""Comments of an exercise's code in the learner's language (judge/parent/comments.py): the marked comments only, the
code and the line numbers unchanged."""

from __future__ import annotations

import pytest

from judge.parent.comments import in_language

SOURCE = '''def f(x):
    y = x * 2  # 乘以二  # en: times two
    # 整行注释  # en: a whole-line comment
    s = "# en: not a comment"  # 只有中文
    return y
'''


@pytest.mark.parametrize("lang, kept, gone", [
    ("en", ["# times two", "# a whole-line comment", "# 只有中文"], ["乘以二", "整行注释", "  # en: times"]),
    ("zh", ["# 乘以二", "# 整行注释", "# 只有中文"], ["times two", "a whole-line comment"]),
])
def test_each_marked_comment_in_one_language(lang, kept, gone):
    shown = in_language(SOURCE, lang)
    assert all(k in shown for k in kept) and not any(g in shown for g in gone), shown
    assert '"# en: not a comment"' in shown  # a string is code, never touched
    assert len(shown.splitlines()) == len(SOURCE.splitlines())


def test_code_that_does_not_tokenize_is_shown_as_written():
    broken = "def f(:\n    '''never closed  # en: x\n"
    assert in_language(broken, "en") == broken
