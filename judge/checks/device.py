"""The device a GPU exercise's hidden tests put their tensors on: CUDA, or the CPU in its CPU tier
(judge/shared/tiers.py)."""

from judge import remote


def grading_device() -> str:
    """'cuda' in a full grading, 'cpu' in the CPU tier: read at each call, inside a test."""
    return remote.grading().device
