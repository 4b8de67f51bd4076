"""The trusted side of a warm worker: start it, hand it a job, read the child's pipes, enforce limits.

A backend (bubblewrap, Docker) subclasses `Worker` to say how a worker is started and how a run
is watched (`RunWatch`: its cgroup's CPU and OOM counters and how to kill everything in it).
`WarmSandbox` then runs jobs on workers from a shared `sandbox.pool.Pool`.
"""

from __future__ import annotations

import abc
import os
import select
import signal
import socket
import tempfile
import threading
import time

from sandbox import channel
from sandbox.base import Inbox, OnMessage, RunOutcome, Sandbox, SandboxError
from sandbox.clock import Clock
from sandbox.limits import Limits, Program
from sandbox.pool import Pool, shared_pool
from sandbox.streams import pump

READY_TIMEOUT_S = 120.0
EXIT_GRACE_S = 10.0


class RunWatch(abc.ABC):
    """What the trusted side can see of one run: counters, and a way to end every process of it."""

    @abc.abstractmethod
    def kill(self) -> None:
        """SIGKILL every process of the run (never the worker)."""

    def cpu_seconds(self) -> float:
        """CPU seconds of the run's processes so far (0.0 where the trusted side cannot see them live)."""
        return 0.0

    def waiting_seconds(self) -> float | None:
        """Seconds the run's threads have waited for a CPU so far (sandbox.clock), None where unseen."""
        return None

    def oom_kills(self) -> int:
        return 0

    def finish(self) -> None:
        """Kill leftovers and release the run's resources."""
        self.kill()


class ProcessWorker:
    """The process side of a worker that runs as a process group of this host (bwrap, local): its log and its
    killing. Mixed into a Worker."""

    def __init__(self):
        self.proc = None  # subprocess.Popen, set by launch()
        self.log = tempfile.TemporaryFile(prefix="practice-worker-")

    def startup_log(self) -> str:
        """The last of what the worker printed (shown when it fails to start); empty once the worker is ended."""
        if self.log.closed:
            return ""
        self.log.seek(0)
        return self.log.read()[-3000:].decode("utf-8", "replace")

    def kill_process_group(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()


class Worker(abc.ABC):
    """One warm worker process in a sandbox, owned by a pool slot."""

    def __init__(self, slot: int):
        self.slot = slot
        self.pool_slot = slot  # the slot of the pool that holds it (set by sandbox.pool.Pool)
        self.pool_name = "default"  # the pool this worker serves (set by WarmSandbox.pool)
        self.runs = 0
        self.ctl: socket.socket | None = None
        self.info: dict = {}
        self.broken = False

    @abc.abstractmethod
    def launch(self) -> socket.socket:
        """Start the worker; return the trusted end of its control socket."""

    @abc.abstractmethod
    def watch(self, limits: Limits) -> RunWatch:
        """Prepare one run (its cgroup); called before the request is sent."""

    @abc.abstractmethod
    def request_fields(self, watch: RunWatch, limits: Limits) -> dict:
        """Backend-specific fields of the run request (uid, cgroup files, mounts)."""

    @abc.abstractmethod
    def terminate(self) -> None:
        """Stop the worker and everything in its sandbox."""

    def start(self) -> None:
        """Launch and wait until the worker has imported torch and says `ready`."""
        self.ctl = self.launch()
        self.ctl.settimeout(READY_TIMEOUT_S)
        try:
            msg, _ = channel.recv(self.ctl, limit=1 << 20)
        except (channel.ChannelClosed, TimeoutError) as exc:
            said = self.startup_log()  # before terminate(), which closes the log
            self.terminate()
            raise SandboxError(f"worker did not start: {exc}; {said}") from None
        if msg.get("op") != "ready":
            said = self.startup_log()
            self.terminate()
            raise SandboxError(f"worker failed to start: {msg.get('error', msg)}; {said}")
        self.ctl.settimeout(None)
        self.info = msg

    def startup_log(self) -> str:
        return ""

    def after_send(self, watch: RunWatch) -> None:  # noqa: B027 - a hook most backends leave empty
        """Called once the run request is sent (a backend may read what the worker says at fork)."""

    def close(self) -> None:
        if self.ctl is not None:
            try:
                channel.send(self.ctl, {"op": "stop"})
            except channel.ChannelClosed:
                pass
            self.ctl.close()
        self.terminate()

    def run(self, job_json: str, limits: Limits, on_message: OnMessage | None,
            inbox: Inbox | None = None) -> RunOutcome:
        """Run one job on this worker; marks the worker broken if it stops answering."""
        outcome = RunOutcome()
        watch = self.watch(limits)
        pipes = [os.pipe() for _ in range(3)]  # result, stdout, stderr (read here)
        stdin_r, stdin_w = os.pipe()
        feed = inbox or Inbox()
        if inbox is None:
            feed.close()
        started = time.monotonic()
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            watch.kill()

        try:
            request = {"op": "run", "job": job_json, "limits": _limit_fields(limits),
                       **self.request_fields(watch, limits)}
            try:
                channel.send(self.ctl, request, fds=[w for _, w in pipes] + [stdin_r])
            except channel.ChannelClosed as exc:
                self.broken = True
                os.close(stdin_w)
                raise SandboxError(f"worker channel closed: {exc}") from None
            finally:
                for _, w in pipes:
                    os.close(w)
                os.close(stdin_r)
            feed.attach(stdin_w)
            self.after_send(watch)
            self.runs += 1
            clock = Clock(limits, started, cpu=watch.cpu_seconds, waiting=watch.waiting_seconds, owes=feed.owes)
            pump(stdout_fd=pipes[1][0], stderr_fd=pipes[2][0], result_fd=pipes[0][0], clock=clock,
                 output_cap=limits.output_kb * 1024, outcome=outcome, on_message=on_message, kill=kill)
            status = self._wait_exit(clock, outcome, kill)
        finally:
            for r, _ in pipes:
                os.close(r)
            try:
                cpu, ooms, waits = watch.cpu_seconds(), watch.oom_kills(), watch.waiting_seconds()
            finally:
                watch.finish()
        outcome.duration_s = time.monotonic() - started
        if status.get("setup_ok") is False:
            self.broken = True
            raise SandboxError(f"the sandbox could not be set up for the run: {outcome.stderr[-1500:]} "
                               f"{self.startup_log()[-1500:]}".strip())
        outcome.exit_code, outcome.signal = status.get("exit_code"), status.get("signal")
        outcome.memory_exceeded = ooms > 0
        if isinstance(status.get("cpu_s"), (int, float)):  # the worker's count (the only one without a cgroup)
            cpu = max(cpu, float(status["cpu_s"]))
        outcome.cpu_s = round(cpu, 3)
        if waits is not None:
            outcome.waiting_s = round(waits, 3)
        if outcome.signal == signal.SIGXCPU or cpu >= limits.cpu_limit:  # its CPU limit, whatever the clock saw
            outcome.cpu_exceeded, outcome.timed_out, outcome.starved = True, False, False
        if status.get("error"):
            outcome.stderr += f"\n[sandbox] {status['error']}"
        return outcome

    def _wait_exit(self, clock: Clock, outcome: RunOutcome, kill) -> dict:
        """The worker's `exited` report; kills the run at a time limit, gives up after a grace period."""
        ended = outcome.timed_out or outcome.cpu_exceeded or outcome.output_exceeded
        grace_end = time.monotonic() + EXIT_GRACE_S if ended else None
        while True:
            now = time.monotonic()
            if grace_end is None and clock.expired():
                clock.mark(outcome)
                kill()
                grace_end = now + EXIT_GRACE_S
            wait = grace_end - now if grace_end is not None else clock.timeout()
            if grace_end is not None and wait <= 0:
                self.broken = True
                return {"error": "the worker did not report how the run ended"}
            if not select.select([self.ctl], [], [], max(0.05, wait))[0]:
                continue  # nothing yet: check the limits again (a timeout inside a message would split it)
            self.ctl.settimeout(EXIT_GRACE_S)
            try:
                msg, _ = channel.recv(self.ctl, limit=1 << 20)
            except TimeoutError:
                self.broken = True
                return {"error": "the worker stopped in the middle of a message"}
            except channel.ChannelClosed:
                self.broken = True
                return {"error": "the worker died during the run"}
            finally:
                if self.ctl.fileno() >= 0:
                    self.ctl.settimeout(None)
            if msg.get("op") == "exited":
                return msg


def _limit_fields(limits: Limits) -> dict:
    return {"cpu_seconds": limits.cpu_limit, "file_size_mb": limits.file_size_mb, "pids": limits.pids,
            "memory_mb": limits.memory_mb}


# Pools are numbered in the order a sandbox first uses them; pool n's slots are n * SLOTS_PER_POOL + k, so the
# workers of two pools never share a slot (a uid, a cgroup).
SLOTS_PER_POOL = 64


class WarmSandbox(Sandbox):
    """A sandbox whose runs go to warm workers from pools shared by every instance of the same config.

    Each pool name (`run(..., pool=...)`) gets its own workers: a grading that holds one worker of pool A
    and waits for one of pool B can never deadlock against another grading doing the same.
    """

    max_runs = 1000
    POOL_NAMES = ("default", "runner", "verifier", "loader")  # loader: artifacts loaded for the trusted side
    compile_cache = None  # a sandbox.compile_cache.CompileCache: trusted Inductor layers per pool, if any

    def __init__(self, program: Program, pool_size: int = 2, max_runs: int | None = None):
        self.program = program
        self.pool_size = pool_size
        if max_runs is not None:
            self.max_runs = max_runs
        self._pools: dict[str, Pool[Worker]] = {}

    @abc.abstractmethod
    def new_worker(self, slot: int) -> Worker:
        """An unstarted worker for slot `slot` (unique across this sandbox's pools)."""

    def pool_key(self, name: str) -> tuple:
        cache = self.compile_cache.key() if self.compile_cache is not None else None
        return (type(self).__name__, self.program.module, name, self.pool_size, self.max_runs, cache)

    def pool(self, name: str = "default") -> Pool[Worker]:
        if name not in self.POOL_NAMES:
            raise SandboxError(f"unknown pool '{name}'; choose one of: {', '.join(self.POOL_NAMES)}")
        if name not in self._pools:
            offset = self.POOL_NAMES.index(name) * SLOTS_PER_POOL
            self._pools[name] = shared_pool(self.pool_key(name), lambda: Pool(
                lambda slot: self._pool_worker(name, offset + slot), self.pool_size, self.max_runs))
        return self._pools[name]

    def _pool_worker(self, name: str, slot: int) -> Worker:
        worker = self.new_worker(slot)
        worker.pool_name = name
        return worker

    def warm_up(self, timeout: float = READY_TIMEOUT_S, pools: tuple[str, ...] = ("default",)) -> None:
        """Block until at least one worker of each pool is ready (raises SandboxError if none can start)."""
        for name in pools:
            self.pool(name).release(self.pool(name).acquire(timeout))

    def run(self, job_json: str, limits: Limits, on_message: OnMessage | None = None, *,
            inbox: Inbox | None = None, pool: str = "default") -> RunOutcome:
        chosen = self.pool(pool)
        worker = chosen.acquire(READY_TIMEOUT_S)
        try:
            return worker.run(job_json, limits, on_message, inbox)
        except BaseException:
            worker.broken = True
            raise
        finally:
            chosen.release(worker)

    def close(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.unref()
