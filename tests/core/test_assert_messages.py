"""A hidden test's own assertion message reaches the report (both forms, whatever pytest the range allows).

The verifier runs pytest with assertion rewriting; pytest 9.0 lost a rewritten `assert x == y, "message"`'s
message when the terminal reporter was disabled (judge.verifier_side.plugin.SilentTerminal keeps one that writes
nowhere).
"""

import shutil

import pytest

from judge.parent.exercise import load_exercise
from judge.parent.grading import grade, make_sandbox
from judge.reports.i18n import text
from judge.reports.report import Verdict

MESSAGES = '''import torch


def test_plain_assert(entry):
    """f(1) is 2, by a plain assert
    zh: f(1) 为 2（普通 assert）
    """
    got = float(entry(torch.ones(1))[0])
    assert got == 2.0, "plain assert: f(1) should be 2"


def test_raised_assertion(entry):
    """f(1) is 2, by raising AssertionError
    zh: f(1) 为 2（抛出 AssertionError）
    """
    got = float(entry(torch.ones(1))[0])
    if got != 2.0:
        raise AssertionError("raised assertion: f(1) should be 2")
'''


@pytest.fixture(scope="module")
def report(tmp_path_factory, fake_course):
    folder = tmp_path_factory.mktemp("course") / "add-one"
    shutil.copytree(fake_course / "add-one", folder)
    (folder / "tests" / "test_add.py").write_text(MESSAGES, encoding="utf-8")
    exercise = load_exercise(folder)
    sandbox = make_sandbox("none")
    try:
        return grade(exercise, "def f(x):\n    return x + 5\n", sandbox=sandbox)
    finally:
        sandbox.close()


@pytest.mark.parametrize("check, message", [
    ("test_plain_assert", "plain assert: f(1) should be 2"),
    ("test_raised_assertion", "raised assertion: f(1) should be 2"),
])
def test_a_hidden_tests_own_message_reaches_the_report_in_both_languages(report, check, message):
    result = next(c for c in report.checks if c.name == check)
    assert report.verdict is Verdict.WRONG_ANSWER and not result.passed
    for lang in ("en", "zh"):
        assert message in text(result.text("message"), lang), (lang, result.message)


def test_the_plain_asserts_comparison_comes_with_its_message(report):
    result = next(c for c in report.checks if c.name == "test_plain_assert")
    assert "assert 6.0 == 2.0" in result.message  # pytest's rewritten explanation, after the message


def test_practice_check_prints_the_message(report):
    from rich.console import Console

    from cli.proving import print_proof
    from judge.parent.proving import Proof

    console = Console(record=True, width=200)
    print_proof(console, Proof("wrong", "wrong/add_five.py", Verdict.WRONG_ANSWER, "test_values", report))
    assert "plain assert: f(1) should be 2" in console.export_text()
