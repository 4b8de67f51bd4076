"""Backend "none": a fresh subprocess with rlimits, a wall-clock timeout and an output cap.

For a learner grading their own code on their own machine. It isolates nothing from the host
beyond a scratch folder and a clean environment; the web refuses it unless told otherwise.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from sandbox import confine
from sandbox.base import Inbox, OnMessage, RunOutcome, Sandbox
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
    cpu = int(limits.cpu_limit)
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


class SubprocessSandbox(Sandbox):
    name = "none"

    def __init__(self, program: Program, python: str = sys.executable):
        self.program = program
        self.python = python

    def run(self, job_json: str, limits: Limits, on_message: OnMessage | None = None, *,
            inbox: Inbox | None = None, pool: str = "default") -> RunOutcome:
        outcome = RunOutcome()
        scratch = tempfile.mkdtemp(prefix="practice-run-")
        result_r, result_w = os.pipe()
        started = time.monotonic()
        env = child_env(scratch, self.program)
        try:
            proc = subprocess.Popen(
                [self.python, "-m", self.program.module, "--result-fd", str(result_w), "--scratch", scratch],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(result_w,),
                cwd=scratch, env=env, start_new_session=True,
                preexec_fn=rlimits(limits, cap_address_space=not cuda_possible(env)))
        except BaseException:
            os.close(result_r)
            os.close(result_w)
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        os.close(result_w)

        def kill():
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        feed = inbox or Inbox()
        if inbox is None:
            feed.close()
        # The job is the first line of stdin (JSON has no raw newline); what the inbox carries follows it.
        feed.attach(os.dup(proc.stdin.fileno()), first=job_json.encode() + b"\n")
        proc.stdin.close()
        try:
            pump(stdout_fd=proc.stdout.fileno(), stderr_fd=proc.stderr.fileno(), result_fd=result_r,
                 deadline=started + limits.time_seconds, output_cap=limits.output_kb * 1024,
                 outcome=outcome, on_message=on_message, kill=kill)
            try:
                proc.wait(timeout=max(0.1, started + limits.time_seconds - time.monotonic()))
            except subprocess.TimeoutExpired:
                outcome.timed_out = True
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
            outcome.cpu_exceeded = outcome.signal == signal.SIGXCPU
        else:
            outcome.exit_code = proc.returncode
        return outcome
