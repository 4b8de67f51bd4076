"""What a prepared process (sandbox/prestarted.py) and its parent share: the line it says ready with, the line that
gives it its run's rlimits, one waiting for its job (`Started`), and ending every process of a run's uid."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

from sandbox.limits import ADDRESS_SPACE_HEADROOM_MB, Limits
from sandbox.zygote import Forked

READY_LINE = b'{"type": "prepared"}\n'  # what a prepared process writes on its result descriptor, alone
PREPARE_FLAG = "--prepare"
MiB = 1024 * 1024


@dataclass
class Started:
    """One prepared process waiting for its job."""

    proc: subprocess.Popen | Forked  # a Forked has every part of a Popen used here
    result_r: int
    scratch: str
    cuda: bool
    uid: int | None
    how: str = "fresh"  # or "zygote": forked from one (sandbox.zygote)

    def discard(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()
        os.close(self.result_r)
        shutil.rmtree(self.scratch, ignore_errors=True)


def limits_line(limits: Limits, cap_address_space: bool) -> bytes:
    """The line that gives a prepared process its run's rlimits: CPU seconds, file size, and address space (not
    where CUDA may start: its start-up reserves far more than any budget, see fresh_process.rlimits)."""
    space = (limits.memory_mb + ADDRESS_SPACE_HEADROOM_MB) * MiB if cap_address_space else None
    return json.dumps({"limits": {"cpu_s": limits.cpu_limit, "file_bytes": limits.file_size_mb * MiB,
                                  "address_space_bytes": space}}).encode() + b"\n"


def apply_limits(line: bytes) -> None:
    """In the prepared process, before its job: set the rlimits `limits_line` sent (soft = hard, so the run cannot
    raise them), the CPU limit on top of what preparing used. ValueError for anything else."""
    given = json.loads(line)["limits"]
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + float(given["cpu_s"])) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    size = int(given["file_bytes"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    if given.get("address_space_bytes"):
        space = int(given["address_space_bytes"])
        resource.setrlimit(resource.RLIMIT_AS, (space, space))


def processes_of(uid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def kill_uid(uid: int) -> None:
    """SIGKILL every process of `uid` until none is left (a fork bomb keeps forking for a moment)."""
    for _ in range(50):
        pids = processes_of(uid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)
