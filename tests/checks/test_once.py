"""judge.checks.once: the work several checks read is done once per grading, its failure shared as well."""

import pytest

from judge.checks import WrongAnswer, once


def test_the_work_runs_once_and_every_check_gets_its_result():
    memo, calls = {}, []

    def make():
        calls.append(1)
        return object()

    first = once(memo, make)
    assert once(memo, make) is first and len(calls) == 1


def test_a_failure_is_raised_again_to_every_check_without_running_again():
    memo, calls = {}, []

    def make():
        calls.append(1)
        raise WrongAnswer("the compile failed")

    for _ in range(2):
        with pytest.raises(WrongAnswer, match="the compile failed"):
            once(memo, make)
    assert len(calls) == 1
