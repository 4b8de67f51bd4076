"""A fresh process of the sandbox's program: its clean environment, its rlimits, and its supervision.

Shared by backend "none" (started per run) and backend "prestarted" (started before its run).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import time

from sandbox import confine
from sandbox.base import Inbox, OnMessage, RunOutcome
from sandbox.clock import Clock
from sandbox.limits import ADDRESS_SPACE_HEADROOM_MB, Limits, Program, inductor_cache_dir
from sandbox.mounts import CODE_ROOT
from sandbox.streams import pump

MiB = 1024 * 1024


def child_env(scratch: str, program: Program) -> dict:
    """A clean environment for the child: nothing of the caller's but what Python and torch need (and which GPUs
    it may use, when the caller says)."""
    env = {
        **program.environment(),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": scratch,
        "TMPDIR": scratch,
        "PYTHONPATH": CODE_ROOT,
        "TORCHINDUCTOR_CACHE_DIR": inductor_cache_dir(),
    }
    if "CUDA_VISIBLE_DEVICES" in os.environ and "CUDA_VISIBLE_DEVICES" not in env:
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env


def cuda_possible(env: dict) -> bool:
    """Whether a child with environment `env` can start CUDA here: the NVIDIA driver is loaded and `env` does not
    hide every GPU (CUDA_VISIBLE_DEVICES empty or -1)."""
    driver = os.path.exists("/dev/nvidiactl") or os.path.exists("/proc/driver/nvidia/version")
    return driver and env.get("CUDA_VISIBLE_DEVICES", "0").strip() not in ("", "-1")




def rlimits(limits: Limits, *, cap_address_space: bool = True):
    """A preexec function applying `limits` as rlimits in the child.

    Without `cap_address_space` (a child that may start CUDA) there is no RLIMIT_AS: CUDA's start-up reserves
    address space far beyond any memory budget (measured on an H200 with torch 2.11: a peak of 17.6 GiB after a
    reduce-overhead compile, and a 7 GiB cap makes cudaGetDeviceCount fail with "out of memory"), so memory_mb
    is not enforced there; this backend isolates nothing anyway."""
    cpu = max(1, int(limits.cpu_limit + 0.999))
    address_space = (limits.memory_mb + ADDRESS_SPACE_HEADROOM_MB) * MiB

    def apply():
        confine.die_with_parent()  # SIGKILL the child when the judge that started it dies
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if cap_address_space:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_mb * MiB, limits.file_size_mb * MiB))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    return apply


def supervise(proc: subprocess.Popen, result_r: int, scratch: str, job_json: str, limits: Limits,
              on_message: OnMessage | None, inbox: Inbox | None, started: float, before: bytes = b"") -> RunOutcome:
    """Hand `proc` (a child of `program` waiting for its job on stdin) the job (after the line `before`, if any)
    and what `inbox` carries, read its streams within `limits` from `started` on, then kill what is left of its
    session and remove `scratch`."""
    outcome = RunOutcome()

    def kill():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    feed = inbox or Inbox()
    if inbox is None:
        feed.close()
    # The job is the first line of stdin (JSON has no raw newline); what the inbox carries follows it.
    feed.attach(os.dup(proc.stdin.fileno()), first=before + job_json.encode() + b"\n")
    proc.stdin.close()
    # No cgroup watches this process: its CPU is capped by RLIMIT_CPU (SIGXCPU), the wall clock is the backstop.
    clock = Clock(limits, started)
    try:
        pump(stdout_fd=proc.stdout.fileno(), stderr_fd=proc.stderr.fileno(), result_fd=result_r, clock=clock,
             output_cap=limits.output_kb * 1024, outcome=outcome, on_message=on_message, kill=kill)
        while proc.poll() is None and not clock.expired():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.05, clock.timeout()))
        if proc.poll() is None:  # a time limit: the streams closed, the process lives on
            clock.mark(outcome)
            kill()
            proc.wait()
    finally:
        kill()  # whatever the submission left behind in its session
        os.close(result_r)
        proc.stdout.close()
        proc.stderr.close()
        shutil.rmtree(scratch, ignore_errors=True)
    outcome.duration_s = time.monotonic() - started
    if proc.returncode is not None and proc.returncode < 0:
        outcome.signal = -proc.returncode
        if outcome.signal == signal.SIGXCPU:
            outcome.cpu_exceeded, outcome.timed_out = True, False
    else:
        outcome.exit_code = proc.returncode
    return outcome
