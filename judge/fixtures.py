"""Fixtures for hidden tests, registered automatically when the judge runs them.

    def test_same_result(entry, starter):
        x, w = torch.randn(4, 16), torch.randn(16, 16)
        assert_same(torch.compile(entry, fullgraph=True)(x, w), starter.step(x, w), case="x [4, 16]")

- `submission`: the learner's module (already imported once, before the first test).
- `entry`: the learner's entry point (the exercise's `entry_point`).
- `reference`: the exercise's reference solution as a module (imported on first use).
- `starter`: the starter (the original code) as a module (imported on first use).
Dynamo is reset and its counters cleared around every test; the random seed is fixed per test.
"""

from __future__ import annotations

import pytest
import torch

from judge.loaded import LOADED


@pytest.fixture
def submission():
    return LOADED.submission


@pytest.fixture
def entry(submission):
    return getattr(submission, LOADED.entry_point)


@pytest.fixture
def reference():
    return LOADED.exercise_module("reference")


@pytest.fixture
def starter():
    return LOADED.exercise_module("starter")


@pytest.fixture(autouse=True)
def _fresh_compiler_state():
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    torch.manual_seed(0)
    yield
    torch.compiler.set_stance("default")
    torch._dynamo.reset()
