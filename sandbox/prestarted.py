"""Backend "prestarted": fresh processes started before their job arrives, each used for exactly one run.

For work that must not share a process (CUDA: a context cannot survive a fork, and a GPU grading's kernels,
caches and memory must not reach the next one), yet should not wait for `import torch`, a CUDA context and
Triton's compiler. Each pool keeps `pool_size` processes of the program started with `--prepare`: the program
prepares itself (trusted code, no job yet), writes `READY_LINE` on its result descriptor and waits for its job
on stdin. A run takes one ready process, sends it the run's limits (a line before the job, which the process,
still running trusted code only, applies to itself with `apply_limits`: hard rlimits it cannot raise again, the
CPU limit counted from the CPU it has used so far; prlimit from outside would need CAP_SYS_RESOURCE, which a
container's root may lack), hands it the job, supervises it as backend "none" does, and
ends its session; a new process is started in the background for the next run. Nothing of a run outlives it:
its process (GPU memory, CUDA state, loaded kernels) is gone, its scratch folder and private cache are removed.

Caches: each process gets a private Inductor/Triton cache folder in its scratch folder. Where `layer` names a
complete trusted layer (`sandbox.compile_cache`, built by trusted code), the process's folder starts as a copy
of it, made before its job arrives, with the pickle caches on; what a run writes there is its own and is
removed with it. Started as root with `uids`, a pool's processes run as an unprivileged uid of their own (one
per process, so that killing a run's leftovers by uid touches nothing else).

It isolates no more than "none" otherwise (no namespaces, no cgroup): docs/deploy.md says where that is enough.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sandbox import confine, launcher
from sandbox.base import Inbox, OnMessage, RunOutcome, Sandbox, SandboxError
from sandbox.compile_cache import CACHES_ON
from sandbox.fresh_process import child_env, cuda_possible, supervise
from sandbox.limits import Limits, Program
from sandbox.prepared_process import PREPARE_FLAG, READY_LINE, MiB, Started, kill_uid, limits_line, processes_of
from sandbox.zygote import Forked, Zygote

log = logging.getLogger(__name__)
PROCESS_ARGV = ["--result-fd", "3", "--scratch"]  # a forked process's result descriptor is always 3
READY_TIMEOUT_S = 300.0  # import torch + CUDA + a first Triton compile, on a busy machine
TAKE_TIMEOUT_S = 600.0  # a run waits this long for a ready process of its pool (they start in the background)
# Limits of a process before its job: generous (trusted code prepares), replaced by the run's at hand-over.
PREPARE_FILE_MB = 2048
Layer = Callable[[], Path | None]  # the trusted cache folder a new process copies, or None (no complete layer)


class PrestartedSandbox(Sandbox):
    """`pool_size` prepared processes per pool, each used once; `layers` maps a pool to its trusted cache layer."""

    name = "prestarted"

    def __init__(self, program: Program, pool_size: int = 1, python: str = sys.executable,
                 layers: dict[str, Layer] | None = None, uids: range | None = None, build: Path | None = None,
                 prepare_nice: int = 0, zygote: bool = False, share_preparation: bool = False):
        """`build`: every process uses this one cache folder, pickle caches on (a trusted build of a layer).
        `prepare_nice`: as root, processes prepare this much nicer than this process and their run gets this
        process's priority back (only root may lower it again, so elsewhere they prepare at the usual priority).
        `zygote`: processes are forked from a zygote that has imported the program (`sandbox.zygote`) instead of
        started afresh; where it cannot start or fork, fresh processes again (`zygote_off` says why).
        `share_preparation`: a process of a pool without a layer starts with a copy of the caches one trusted
        process filled preparing (Triton's driver and launcher modules and the tiny kernel it compiles), built
        once by a process that never gets a job, instead of compiling them again."""
        self.program, self.pool_size, self.python = program, pool_size, python
        self.zygote_off: str | None = None if zygote else "off"
        self._zygote: Zygote | None = None
        self._zygote_lock = threading.Lock()
        self._shared: str | None = None if share_preparation else ""  # "": none; None: not built yet
        self._shared_lock = threading.Lock()
        self.prepare_times: list[tuple[str, str, float]] = []  # (pool, "zygote" or "fresh", seconds to ready)
        self.prepare_nice = prepare_nice if os.geteuid() == 0 else 0
        self._priority = os.getpriority(os.PRIO_PROCESS, 0)
        self.layers, self.build = layers or {}, build
        self.uids = uids if uids is not None and os.geteuid() == 0 else None
        self._ready: dict[str, list[Started]] = {}
        self._starting: dict[str, int] = {}
        self._in_use: set[int] = set()
        self._cond = threading.Condition()
        self._closed = False
        self.errors: list[str] = []

    def describe(self) -> str:
        who = f", uids {self.uids.start}+" if self.uids else ""
        how = "forked from a zygote" if self.zygote_off is None else "fresh"
        return f"prestarted ({self.pool_size} prepared processes per pool, {how}, one run each{who}, no isolation)"

    # ---- the pools ---------------------------------------------------------------------------------------------

    def warm_up(self, pools=("runner", "verifier")) -> None:
        """Start filling `pools` (in the background) and wait until each has one prepared process."""
        self.start()  # before the pools fill, so that every first process is forked and finds the shared caches
        for pool in pools:
            self._fill(pool)
        for pool in pools:
            self._take(pool, keep=True)

    def wait_prepared(self, pool: str, count: int, timeout: float = READY_TIMEOUT_S) -> bool:
        """Wait until `pool` holds `count` prepared processes (filling it first); False when the time ran out or
        the pool stopped preparing with fewer (a process failed: `errors` says why)."""
        self._fill(pool)
        with self._cond:
            self._cond.wait_for(lambda: len(self._ready.get(pool, [])) >= count or self._closed
                                or not self._starting.get(pool), timeout)
            return len(self._ready.get(pool, [])) >= count

    def start(self) -> None:
        """Start the zygote and the shared preparation now rather than at the first process's preparation."""
        with self._zygote_lock:
            self._living_zygote()
        if self.build is None:
            self._shared_preparation()

    def ready_count(self, pool: str) -> int:
        with self._cond:
            return len(self._ready.get(pool, []))

    def _fill(self, pool: str) -> None:
        with self._cond:
            if self._closed:
                return
            missing = self.pool_size - len(self._ready.get(pool, [])) - self._starting.get(pool, 0)
            self._starting[pool] = self._starting.get(pool, 0) + max(0, missing)
        for _ in range(max(0, missing)):
            threading.Thread(target=self._start_one, args=(pool,), name=f"prestart-{pool}", daemon=True).start()

    def _start_one(self, pool: str) -> None:
        started, began = None, time.monotonic()
        try:
            started = self._launch(pool)
            self._wait_ready(started)
            with self._cond:
                self.prepare_times.append((pool, started.how, time.monotonic() - began))
        except Exception as exc:  # noqa: BLE001 - reported to the run that waits, and logged
            if started is not None:
                started.discard()
                self._release(started.uid)
            started = None
            log.warning("a prestarted %s process failed to prepare: %s", pool, exc)
            with self._cond:
                self.errors.append(f"{type(exc).__name__}: {exc}"[:2000])
        with self._cond:
            self._starting[pool] -= 1
            if started is not None and self._closed:
                started.discard()
                self._in_use.discard(started.uid)
            elif started is not None:
                self._ready.setdefault(pool, []).append(started)
            self._cond.notify_all()

    def _take(self, pool: str, keep: bool = False) -> Started | None:
        """A prepared process of `pool` (removed from it unless `keep`); SandboxError when none comes."""
        deadline = time.monotonic() + TAKE_TIMEOUT_S
        with self._cond:
            errors = len(self.errors)
            while not self._ready.get(pool):
                if self._closed:
                    raise SandboxError("the sandbox is closed")
                if len(self.errors) > errors and not self._starting.get(pool):
                    raise SandboxError(f"no prestarted process could prepare: {self.errors[-1]}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SandboxError(f"no prestarted {pool} process was ready within {TAKE_TIMEOUT_S:.0f} s")
                if not self._starting.get(pool):
                    self._cond.release()
                    try:
                        self._fill(pool)
                    finally:
                        self._cond.acquire()
                self._cond.wait(min(left, 5.0))
            if keep:
                return None
            started = self._ready[pool].pop(0)
        if started.proc.poll() is not None:  # it died waiting (killed, or its zygote was): the next one
            started.discard()
            self._release(started.uid)
            return self._take(pool)
        return started

    def _uid(self) -> int | None:
        if self.uids is None:
            return None
        with self._cond:
            for uid in self.uids:
                if uid not in self._in_use and not processes_of(uid):
                    self._in_use.add(uid)
                    return uid
        raise SandboxError(f"every uid of {self.uids} is in use")

    def _shared_preparation(self) -> str | None:
        """The folder of caches a trusted process filled preparing (built on first use by one that never gets a
        job, then ended), or None where it is off or could not be built."""
        with self._shared_lock:
            if self._shared is None:
                folder = tempfile.mkdtemp(prefix="practice-prepared-")
                started = None
                try:
                    started = self._launch("shared", cache_dir=folder)
                    self._wait_ready(started)
                    self._shared = folder
                except Exception as exc:  # noqa: BLE001 - each process then compiles its own, as before
                    log.warning("the shared preparation failed; each process prepares its own caches: %s", exc)
                    shutil.rmtree(folder, ignore_errors=True)
                    self._shared = ""
                finally:
                    if started is not None:
                        started.discard()
            return self._shared or None

    def _launch(self, pool: str, cache_dir: str | None = None) -> Started:
        """A process of `pool` preparing; `cache_dir`: the trusted folder it prepares in, as this user (the shared
        preparation's process, which never gets a job)."""
        scratch = tempfile.mkdtemp(prefix=f"practice-{pool}-")
        env = child_env(scratch, self.program)
        cache = os.path.join(scratch, "inductor")
        layer = self.layers.get(pool, lambda: None)()
        if cache_dir is not None:
            cache = cache_dir
        elif self.build is not None:
            cache = str(self.build)
            env.update(CACHES_ON)
        elif layer is not None:  # a private copy of the trusted layer: whatever the run writes stays its own
            shutil.copytree(layer, cache, symlinks=False, ignore=shutil.ignore_patterns("layer.json", "locks"))
            env.update(CACHES_ON)
        elif (shared := self._shared_preparation()) is not None:  # a private copy, the pickle caches still off
            shutil.copytree(shared, cache, symlinks=False)
        else:
            os.mkdir(cache)
        env.update({"TORCHINDUCTOR_CACHE_DIR": cache, "TRITON_CACHE_DIR": os.path.join(cache, "triton")})
        cuda = cuda_possible(env)
        uid = self._uid() if cache_dir is None else None
        if uid is not None:  # a uid no passwd file names: getpass (Inductor's cache folder name) reads these
            env.update({"USER": f"learner{uid}", "LOGNAME": f"learner{uid}"})
            for dirpath, dirnames, filenames in os.walk(scratch):
                for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                    os.lchown(name, uid, uid)
        result_r, result_w = os.pipe()

        def preexec() -> None:
            confine.die_with_parent()  # SIGKILL the process when the thread that started it (the launcher) ends
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
            resource.setrlimit(resource.RLIMIT_FSIZE, (PREPARE_FILE_MB * MiB, PREPARE_FILE_MB * MiB))
            if self.prepare_nice:
                os.nice(self.prepare_nice)
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)

        try:
            proc: subprocess.Popen | Forked | None = self._forked(env, scratch, uid, result_w)
            how = "zygote" if proc is not None else "fresh"
            if proc is None:
                proc = launcher.call(lambda: subprocess.Popen(
                    [self.python, "-m", self.program.module, "--result-fd", str(result_w), "--scratch", scratch,
                     PREPARE_FLAG], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    pass_fds=(result_w,), cwd=scratch, env=env, start_new_session=True, preexec_fn=preexec))
        except BaseException:
            os.close(result_r)
            shutil.rmtree(scratch, ignore_errors=True)
            self._release(uid)
            raise
        finally:
            os.close(result_w)
        return Started(proc, result_r, scratch, cuda, uid, how)

    def _forked(self, env: dict, scratch: str, uid: int | None, result_w: int) -> Forked | None:
        """A process forked by this sandbox's zygote (started on first use) as `_launch` would start it, or None
        where the zygote is off or fails (then it stays off, and the reason is logged once)."""
        for attempt in range(2):
            with self._zygote_lock:
                zygote = self._living_zygote()
            if zygote is None:
                return None
            try:
                return zygote.fork([*PROCESS_ARGV, scratch, PREPARE_FLAG], env, scratch, uid=uid,
                                   nice=self.prepare_nice, file_bytes=PREPARE_FILE_MB * MiB, result_w=result_w)
            except SandboxError as exc:
                if attempt == 0 and not zygote.alive():
                    continue  # killed between the check and the fork: started again once, not given up
                with self._zygote_lock:
                    self._zygote_failed(str(exc))
                return None
        return None

    def _living_zygote(self) -> Zygote | None:
        """The zygote, started (again, where one was killed) if need be; None where it is off. Under _zygote_lock."""
        if self.zygote_off is None and (self._zygote is None or not self._zygote.alive()):
            if self._zygote is not None:
                self._zygote.close()
                self._zygote = None
            try:
                self._zygote = Zygote(self.program, self.python)
            except SandboxError as exc:
                self._zygote_failed(str(exc))
        return self._zygote if self.zygote_off is None else None

    def _zygote_failed(self, reason: str) -> None:
        if self.zygote_off is None:
            log.warning("prestarted processes start afresh from now on: %s", reason)
            self.zygote_off = reason[:2000]

    def _wait_ready(self, started: Started) -> None:
        """Read the ready line; what the preparation printed is drained so that no run counts it."""
        deadline, got = time.monotonic() + READY_TIMEOUT_S, b""
        streams = {started.result_r: "result", started.proc.stdout.fileno(): "stdout",
                   started.proc.stderr.fileno(): "stderr"}
        printed = {"stdout": b"", "stderr": b""}
        while not got.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxError(f"not prepared within {READY_TIMEOUT_S:.0f} s")
            readable, _, _ = select.select(list(streams), [], [], left)
            for fd in readable:
                chunk = os.read(fd, 1 if streams[fd] == "result" else 1 << 16)
                if not chunk:
                    raise SandboxError(f"ended while preparing ({streams[fd]} closed; stderr: "
                                       f"{printed['stderr'][-1500:].decode(errors='replace')})")
                if streams[fd] == "result":
                    got += chunk
                else:
                    printed[streams[fd]] += chunk
        if got != READY_LINE:
            raise SandboxError(f"said {got[:200]!r} instead of being ready")
        for fd in (started.proc.stdout.fileno(), started.proc.stderr.fileno()):
            os.set_blocking(fd, False)
            try:
                while os.read(fd, 1 << 16):
                    pass
            except BlockingIOError:
                pass
            os.set_blocking(fd, True)

    def _release(self, uid: int | None) -> None:
        if uid is not None:
            with self._cond:
                self._in_use.discard(uid)

    # ---- a run ---------------------------------------------------------------------------------------------------

    def run(self, job_json: str, limits: Limits, on_message: OnMessage | None = None, *,
            inbox: Inbox | None = None, pool: str = "default") -> RunOutcome:
        self._fill(pool)
        started = self._take(pool)
        self._fill(pool)  # its successor prepares while this run goes on
        try:
            if self.prepare_nice:  # every thread of its process group (Linux: PRIO_PGRP sets each thread's)
                with contextlib.suppress(ProcessLookupError):  # it died waiting: its run says so
                    os.setpriority(os.PRIO_PGRP, started.proc.pid, self._priority)
            return supervise(started.proc, started.result_r, started.scratch, job_json, limits, on_message, inbox,
                             time.monotonic(), before=limits_line(limits, cap_address_space=not started.cuda))
        finally:
            if started.uid is not None:
                kill_uid(started.uid)  # a process that left its session is still this uid's
                self._release(started.uid)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            ready = [s for pool in self._ready.values() for s in pool]
            self._ready.clear()
            self._cond.notify_all()
        for started in ready:
            started.discard()
            self._release(started.uid)
        with self._zygote_lock:
            zygote, self._zygote = self._zygote, None
            if self.zygote_off is None:
                self.zygote_off = "closed"
        if zygote is not None:
            zygote.close()
        with self._shared_lock:
            shared, self._shared = self._shared, ""
        if shared:
            shutil.rmtree(shared, ignore_errors=True)
