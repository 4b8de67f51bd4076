"""What an exercise needs from the machine that grades it, and so which job queue carries it.

Two queues exist from the start: `cpu` (every worker's default) and `gpu` (only workers started with
`--queue gpu`, which refuse to start without a CUDA device). An exercise that declares `needs_cuda = true`
goes to `gpu`; read through `getattr` so that exercises of a format without the field go to `cpu`.
"""

from __future__ import annotations

from judge.reports.i18n import T

QUEUES = ("cpu", "gpu")
NEEDS_CUDA = T("needs a CUDA GPU")  # how the lists (CLI, notebook) and `practice prove` say it


def needs_cuda(exercise) -> bool:
    """Whether the exercise declares that it needs a CUDA device."""
    return bool(getattr(exercise, "needs_cuda", False))


def queue_for(exercise) -> str:
    """The queue whose workers can grade this exercise."""
    return "gpu" if needs_cuda(exercise) else "cpu"


def first_queue(exercise) -> str:
    """The queue a new submission enters: `cpu` for a GPU exercise with a CPU tier (graded there first; a file
    that passes it goes on to `gpu`: judge/shared/tiers.py, web/grading_loop.py), else `queue_for`."""
    from judge.shared.tiers import has_cpu_tier

    return "cpu" if has_cpu_tier(exercise) else queue_for(exercise)


def cuda_missing() -> str | None:
    """Why this machine cannot serve the gpu queue, or None when it can."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a dependency
        return f"torch cannot be imported ({exc})"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} sees no CUDA device on this machine"
    return None


def cannot_grade_here(exercise) -> str | None:
    """Why this machine cannot grade `exercise` ("needs a CUDA GPU (torch ... sees no CUDA device ...)"), or None."""
    if not needs_cuda(exercise):
        return None
    reason = cuda_missing()
    return f"{NEEDS_CUDA.en} ({reason})" if reason else None


def backend_for(exercise, name: str) -> str:
    """The sandbox backend to grade `exercise` with when `name` was asked for: an exercise that needs CUDA never
    runs in a child forked from a warm worker ("local" becomes "none", fresh processes), since CUDA cannot start
    again in a forked child once its parent touched it."""
    return "none" if needs_cuda(exercise) and name == "local" else name
