"""The CUDA rule for forking: a process that has started CUDA must never fork a child that uses it.

CUDA's driver state does not survive a fork: torch marks such a child "in bad fork" and its first CUDA call fails
with "Cannot re-initialize CUDA in forked subprocess". A process counts as having started CUDA once torch
initialised it (`torch.cuda.is_initialized()`) or once the driver library is loaded at all (`cuInit`, which
`torch.cuda.is_available()` calls unless PYTORCH_NVML_BASED_CUDA_CHECK=1, loads it without initialising torch's
CUDA state). The zygote (`sandbox.zygote_process`) asks `fork_hazard()` before every fork.
"""

from __future__ import annotations

import sys

DRIVER_LIBRARIES = ("libcuda.so",)  # the driver API's library, loaded by cuInit (not by `import torch`)
NVML_CHECK = {"PYTORCH_NVML_BASED_CUDA_CHECK": "1"}  # torch.cuda.is_available() asks NVML, never cuInit


def fork_hazard(maps: str | None = None) -> str | None:
    """Why this process may not fork a child that uses CUDA, or None. `maps`: /proc/self/maps's text (read here
    when None)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "this process has initialised CUDA (torch.cuda.is_initialized())"
    if maps is None:
        try:
            with open("/proc/self/maps") as fh:
                maps = fh.read()
        except OSError:
            maps = ""
    for name in DRIVER_LIBRARIES:
        if name in maps:
            return f"this process has loaded the CUDA driver ({name}: cuInit ran, e.g. by torch.cuda.is_available())"
    return None


def in_bad_fork() -> bool:
    """In a forked child: whether torch says its parent had started CUDA (so CUDA cannot start here)."""
    torch = sys.modules.get("torch")
    return torch is not None and bool(torch.cuda._is_in_bad_fork())
