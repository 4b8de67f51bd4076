"""judge.shared.torch_seed: the same CPU draws as torch.manual_seed, and no seeding queued for absent devices."""

import pytest
import torch

from judge.shared.torch_seed import seed_torch


def test_seeding_draws_what_torch_manual_seed_draws():
    torch.manual_seed(1234)
    expected = torch.rand(5)
    seed_torch(1234)
    assert torch.equal(torch.rand(5), expected)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is here: torch.manual_seed seeds it")
def test_without_cuda_no_seeding_is_deferred_to_a_device(monkeypatch):
    deferred = []
    real = torch.cuda.random._lazy_call
    monkeypatch.setattr(torch.cuda.random, "_lazy_call", lambda *a, **k: deferred.append(a) or real(*a, **k))
    seed_torch(99)
    assert deferred == []
    torch.manual_seed(99)  # what it replaces: a seeding deferred until CUDA starts, its stack formatted
    assert deferred
