"""The CUDA rule for forking: a process that has started CUDA must never fork a child that uses it.

CUDA's driver state does not survive a fork: torch marks such a child "in bad fork" and its first CUDA call fails
with "Cannot re-initialize CUDA in forked subprocess". A process counts as having started CUDA once torch
initialised it (`torch.cuda.is_initialized()`) or once the driver itself is initialised (`cuInit`, which
`torch.cuda.is_available()` calls unless PYTORCH_NVML_BASED_CUDA_CHECK=1, without initialising torch's CUDA state).
The driver library is loaded by `import torch` of a CUDA build (its CUDA libraries link it), so a loaded library
alone says nothing: the driver is asked, by a call that answers CUDA_ERROR_NOT_INITIALIZED until `cuInit` ran.
The zygote (`sandbox.zygote_process`) asks `fork_hazard()` before every fork.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable

DRIVER_LIBRARIES = ("libcuda.so",)  # the driver API's library (linked by a CUDA build of torch)
CUDA_ERROR_NOT_INITIALIZED = 3
NVML_CHECK = {"PYTORCH_NVML_BASED_CUDA_CHECK": "1"}  # torch.cuda.is_available() asks NVML, never cuInit


def driver_initialised(path: str) -> bool:
    """Whether the loaded driver library at `path` has run cuInit; never loads or initialises it."""
    try:
        driver = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:  # not loaded after all
        return False
    count = ctypes.c_int(0)
    return driver.cuDeviceGetCount(ctypes.byref(count)) != CUDA_ERROR_NOT_INITIALIZED


def fork_hazard(maps: str | None = None, initialised: Callable[[str], bool] = driver_initialised) -> str | None:
    """Why this process may not fork a child that uses CUDA, or None. `maps`: /proc/self/maps's text (read here
    when None); `initialised`: asks the driver library at a path whether cuInit ran."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "this process has initialised CUDA (torch.cuda.is_initialized())"
    if maps is None:
        try:
            with open("/proc/self/maps") as fh:
                maps = fh.read()
        except OSError:
            maps = ""
    for line in maps.splitlines():
        path = line.split(maxsplit=5)[5] if len(line.split(maxsplit=5)) == 6 else ""
        if any(name in os.path.basename(path) for name in DRIVER_LIBRARIES) and initialised(path):
            return (f"this process has initialised the CUDA driver ({os.path.basename(path)}: cuInit ran, e.g. by "
                    "torch.cuda.is_available())")
    return None


def in_bad_fork() -> bool:
    """In a forked child: whether torch says its parent had started CUDA (so CUDA cannot start here)."""
    torch = sys.modules.get("torch")
    return torch is not None and bool(torch.cuda._is_in_bad_fork())
