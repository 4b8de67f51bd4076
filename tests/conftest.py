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


def pytest_collection_modifyitems(items):
    """Modules with slow tests first, each module's tests kept together and in order: pytest-xdist hands out
    tests in this order, so the two workers end on quick tests, together, instead of one finishing a long test
    while the other waits (and a module's warm pools are still started once)."""
    slow_modules = {item.module.__name__ for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.module.__name__ not in slow_modules)  # a stable sort
