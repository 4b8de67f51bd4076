"""Backend "local": warm workers as plain processes of the user's own, no isolation, for one's own machine.

The same warm fork the hardened backends use (`sandbox.worker`: torch imported once, a forked child per
run), without namespaces, cgroups or another uid: a re-grade on save starts in milliseconds instead of
seconds. Limits are rlimits (CPU time, address space, file size) and the wall clock, as for "none"; each
run is its own process group, killed when it ends or overruns. Never for a shared server.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

from sandbox import channel, confine, launcher
from sandbox.base import SandboxError
from sandbox.compile_cache import CACHES_ON, CompileCache
from sandbox.limits import ADDRESS_SPACE_HEADROOM_MB, Limits, Program, inductor_cache_dir
from sandbox.mounts import CODE_ROOT
from sandbox.warm import ProcessWorker, RunWatch, WarmSandbox, Worker


class GroupWatch(RunWatch):
    """A run is the process group its child leads (the worker says the child's pid at fork)."""

    def __init__(self):
        self.pid: int | None = None

    def kill(self) -> None:
        if self.pid:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


class LocalWorker(ProcessWorker, Worker):
    def __init__(self, slot: int, sandbox: LocalSandbox):
        Worker.__init__(self, slot)
        ProcessWorker.__init__(self)
        self.sb = sandbox
        self.scratch = tempfile.mkdtemp(prefix="practice-local-")

    def launch(self) -> socket.socket:
        from sandbox.worker import bootstrap

        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = {**self.sb.program.environment(), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "HOME": self.scratch, "TMPDIR": self.scratch, **self.sb.cache_env()}
        argv = [sys.executable, "-I", "-c", bootstrap(CODE_ROOT), "--ctl-fd", str(theirs.fileno()),
                "--program", self.sb.program.module, "--local-scratch", self.scratch]
        try:
            self.proc = launcher.call(lambda: subprocess.Popen(
                argv, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                env=env, cwd=self.scratch, start_new_session=True, preexec_fn=self._preexec))
        finally:
            theirs.close()
        return mine

    def _preexec(self) -> None:
        confine.die_with_parent()
        if self.sb.nice:
            os.nice(self.sb.nice)

    def watch(self, limits: Limits) -> RunWatch:
        return GroupWatch()

    def after_send(self, watch: RunWatch) -> None:
        try:
            msg, _ = channel.recv(self.ctl, limit=1 << 16)
        except channel.ChannelClosed as exc:
            self.broken = True
            raise SandboxError(f"the local worker did not fork the run: {exc}") from None
        if msg.get("op") != "forked" or not isinstance(msg.get("pid"), int):
            self.broken = True
            raise SandboxError(f"the local worker answered {str(msg)[:200]} instead of the run's pid")
        assert isinstance(watch, GroupWatch)  # made by self.watch
        watch.pid = msg["pid"]

    def request_fields(self, watch: RunWatch, limits: Limits) -> dict:
        return {"uid": os.getuid(), "address_space_headroom_mb": ADDRESS_SPACE_HEADROOM_MB,
                "env": {**self.sb.program.environment(), "PYTHONPATH": CODE_ROOT, **self.sb.cache_env()}}

    def terminate(self) -> None:
        self.kill_process_group()
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.log.close()


class LocalSandbox(WarmSandbox):
    """Warm local workers (one per pool by default): `practice --watch`, `practice prove`, the test suite."""

    name = "local"

    def __init__(self, program: Program, pool_size: int = 1, max_runs: int = 200,
                 compile_cache: CompileCache | None = None, nice: int = 0):
        """`nice`: the workers (and so every run) this many steps below this process's CPU priority."""
        super().__init__(program, pool_size, max_runs)
        self.nice = nice
        if compile_cache is not None and compile_cache.build is None:
            raise SandboxError("the local backend shares one C++ build cache and takes no read-only layers; "
                               "give it a compile cache only to build a layer (trusted code)")
        self.compile_cache = compile_cache

    def cache_env(self) -> dict[str, str]:
        """The runs' Inductor cache: the shared C++ build cache (no pickle caches), or the folder of a layer
        being built by trusted code (with them)."""
        if self.compile_cache is None:
            return {"TORCHINDUCTOR_CACHE_DIR": inductor_cache_dir()}
        return {"TORCHINDUCTOR_CACHE_DIR": str(self.compile_cache.build), **CACHES_ON,
                **dict(self.compile_cache.build_env)}

    def facts(self) -> dict[str, str | int | float]:
        return {"pool": self.pool_size}

    def new_worker(self, slot: int) -> Worker:
        return LocalWorker(slot, self)
