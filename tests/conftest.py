"""Shared fixtures: the fake course and a grader for it."""

from pathlib import Path

import pytest

FAKE_COURSE = Path(__file__).parent / "fake_course"
# The fake course's hidden tests run inside the judge, never directly.
collect_ignore = ["fake_course"]


@pytest.fixture(scope="session")
def fake_course() -> Path:
    return FAKE_COURSE


@pytest.fixture(scope="session")
def add_one():
    from judge.exercise import load_exercise

    return load_exercise(FAKE_COURSE / "add-one")
