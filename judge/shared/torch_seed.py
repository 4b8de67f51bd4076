"""Seeding torch before a hidden test or after a runner's reset, without work for devices the process lacks."""

from __future__ import annotations

import torch


def seed_torch(seed: int) -> None:
    """`torch.manual_seed(seed)` where a CUDA device can be used; elsewhere the CPU generator alone. Until CUDA is
    initialised, `torch.manual_seed` queues a seeding call for each kind of device (CUDA, XPU, MTIA), each with its
    stack formatted (~0.5 ms a kind, on every test of every grading); in a process with no such device nothing ever
    runs them. The CPU generator is seeded the same way either way, so every draw is the same."""
    if torch.cuda.is_available():
        torch.manual_seed(seed)
    else:
        torch.default_generator.manual_seed(seed)
