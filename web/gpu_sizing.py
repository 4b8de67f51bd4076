"""How many GPU gradings a machine runs at once, and so how many prestarted processes each GPU pool keeps ready.

A GPU grading is two prestarted processes (runner, verifier), each with a CUDA context, compiling on the CPU
(forked from a zygote that imported torch once: sandbox/zygote.py). The graders' concurrency (`--concurrency`,
`PRACTICE_WORKERS`) is the ceiling; the machine lowers it: one grading per `CORES_PER_GPU_GRADING` cores, and one
per `GIB_PER_GPU_GRADING` of the GPU's free memory (read with nvidia-smi, so that the server itself never opens a
CUDA context). `PRACTICE_GPU_GRADERS` sets it outright.
"""

from __future__ import annotations

import os
import subprocess

CORES_PER_GPU_GRADING = 1  # measured on the lent H200: a warm grading's compile keeps about one core busy
GIB_PER_GPU_GRADING = 4  # two CUDA contexts (about 0.5 GiB each) and the exercises' tensors, with room to spare


def gpu_free_bytes() -> int | None:
    """The first GPU's free memory, or None where nvidia-smi cannot tell."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits", "-i", "0"],
                              capture_output=True, text=True, timeout=10)
        return int(done.stdout.split()[0]) * 1024 * 1024 if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def gpu_concurrency(workers: int, setting: int = 0, cores: int | None = None,
                    free_bytes: int | None = None) -> int:
    """GPU gradings at once: `setting` when given (> 0), else `workers` lowered to the machine's cores and free GPU
    memory (None: not known, no limit from it); at least 1."""
    if setting > 0:
        return setting
    cores = cores if cores is not None else (os.cpu_count() or 1)
    limits = [workers, cores // CORES_PER_GPU_GRADING]
    if free_bytes is not None:
        limits.append(free_bytes // (GIB_PER_GPU_GRADING << 30))
    return max(1, min(limits))


def gpu_graders(settings, course) -> int:
    """The GPU gradings at once for these settings on this machine (nvidia-smi asked only where the course has GPU
    exercises)."""
    from judge.parent.requirements import needs_cuda

    if settings.gpu_graders > 0 or not any(needs_cuda(e) for e in course.all()):
        return gpu_concurrency(settings.workers, settings.gpu_graders)
    return gpu_concurrency(settings.workers, free_bytes=gpu_free_bytes())
