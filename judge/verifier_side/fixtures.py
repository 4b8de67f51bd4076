"""Fixtures for hidden tests, registered automatically when the verifier runs them.

    def test_same_result(entry, starter):
        x, w = torch.randn(4, 16), torch.randn(16, 16)
        assert_same(entry.compile(fullgraph=True)(x, w), starter.step(x, w), case="x [4, 16]")

- `entry`: the learner's entry point, as a `judge.remote.Ref`: it lives in the runner. `entry.compile(...)`
  compiles it there and runs the captured graph here; `entry(...)` calls it eagerly there (the runner sees
  those arguments). See docs/authoring.md.
- `learner`: `learner("name")` is a Ref to another name the learner's file defines.
- `public`: the exercise's public module (public.py), imported here too.
- `reference`: the exercise's reference solution as a module (imported on first use, here).
- `starter`: the starter (the original code) as a module (imported on first use, here).
- `grading`: this grading's `judge.remote.GradingContext` (operator providers, the exercise's modules).
Dynamo is reset and its counters cleared around every test; the random seed is drawn per test from the grading's
(judge/shared/draw.py): the same file on the same exercise version sees the same inputs, no file can know them before.
"""

from __future__ import annotations

import pytest
import torch

from judge import remote
from judge.shared import draw
from judge.shared.torch_seed import seed_torch


@pytest.fixture
def entry():
    return remote.entry_ref()


@pytest.fixture
def learner():
    return remote.learner


@pytest.fixture
def grading() -> remote.GradingContext:
    return remote.grading()


@pytest.fixture
def public(grading):
    return grading.exercise_module("exercise_public")


@pytest.fixture
def reference(grading):
    return grading.exercise_module("reference")


@pytest.fixture
def starter(grading):
    return grading.exercise_module("starter")


@pytest.fixture(autouse=True)
def _fresh_compiler_state(request):
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    grading = remote.grading()
    seed_torch(draw.stream(grading.seed, f"{request.node.path.name}::{request.node.name}"))
    grading.reset_runner()
    if grading.view is not None:  # the compiler's view's timeline names the test of each call
        grading.view.start_test(request.node.name)
    yield
    torch.compiler.set_stance("default")
    torch._dynamo.reset()
