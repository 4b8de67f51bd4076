"""What is installed here, read from the package metadata without importing it (torch takes ~1 s to import,
which the trusted side of a grading does not otherwise need)."""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version


@functools.cache
def torch_version() -> str:
    """The installed torch's version as `torch.__version__` gives it ("2.13.0+cpu"), or "" without torch."""
    try:
        return version("torch")
    except PackageNotFoundError:
        return ""


def version_warning(exercise) -> str | None:
    """A warning when the installed torch is not one `exercise` (a judge.parent.exercise.Exercise) was verified on."""
    installed = torch_version().split("+")[0]
    if installed not in exercise.verified_torch:
        return (f"{exercise.id}: verified on torch {', '.join(exercise.verified_torch)}, running {installed}; "
                "compiler behaviour moves between releases, so re-check the pinned verdicts")
    return None
