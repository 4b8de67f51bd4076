"""Backend "bwrap": warm workers inside bubblewrap, one confined child per submission.

The worker runs as root but without a user namespace (a user namespace would map the learner's
uid back to real root), in its own net/pid/ipc/uts namespaces, on a read-only root that holds
only /usr, the Python environment and the `judge` and `sandbox` packages. Each submission's child
then gets its own namespaces, a fresh /tmp, a per-run cgroup and the slot's unprivileged uid
(see `sandbox.worker`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
from pathlib import Path

from sandbox import cgroups, launcher
from sandbox.base import SandboxError
from sandbox.clock import QueueWaits
from sandbox.compile_cache import LAYERS_DIR, CompileCache
from sandbox.limits import Limits, Program
from sandbox.mounts import CODE_DIR, CODE_ROOT, interpreter, packages, python_roots, worker_env
from sandbox.settings import SandboxSettings
from sandbox.warm import ProcessWorker, RunWatch, WarmSandbox, Worker

CAPS = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_CHOWN")
MiB = 1024 * 1024


def available() -> str | None:
    """None if this backend can run here, else the reason it cannot."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    if os.geteuid() != 0:
        return "the bwrap backend runs as root (it drops each submission to an unprivileged uid)"
    if cgroups.version() == 0:
        return "no cgroup filesystem at /sys/fs/cgroup"
    return None


class CgroupWatch(RunWatch):
    def __init__(self, cg: cgroups.Cgroup):
        self.cg = cg
        self.waits = QueueWaits()

    def kill(self) -> None:
        self.cg.kill_all()

    def cpu_seconds(self) -> float:
        return self.cg.cpu_seconds()

    def waiting_seconds(self) -> float:
        return self.waits.sample(self.cg.thread_ids())

    def oom_kills(self) -> int:
        return self.cg.oom_kills()

    def finish(self) -> None:
        self.cg.kill_all()
        self.cg.remove()


def _bind_system(argv: list[str]) -> None:
    """/usr read-only, the merged-/usr links as on the host, and the few /etc files programs need."""
    argv += ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / top
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), f"/{top}"]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), f"/{top}"]
    for etc in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                "/etc/localtime", "/etc/nsswitch.conf"):
        if os.path.exists(etc):
            argv += ["--ro-bind", etc, etc]


def _parent_dirs(argv: list[str]) -> list[str]:
    """`--dir` options making every parent of a mount point world-readable (bwrap makes them 0700)."""
    parents: set[str] = set()
    for i, arg in enumerate(argv):
        if arg in ("--ro-bind", "--bind", "--symlink"):
            parts = Path(argv[i + 2]).parent.parts
            parents |= {str(Path(*parts[:n])) for n in range(2, len(parts) + 1)}
    opts = []
    for d in sorted(parents, key=lambda p: (p.count("/"), p)):
        opts += ["--perms", "0755", "--dir", d]
    return opts


class BwrapWorker(ProcessWorker, Worker):
    def __init__(self, slot: int, sandbox: BwrapSandbox):
        Worker.__init__(self, slot)
        ProcessWorker.__init__(self)
        self.sb = sandbox
        self.uid = sandbox.settings.uid_base + slot
        # One cgroup per worker, never per slot: a retired worker is closed in the background while its
        # successor starts in the same slot, and closing removes the worker's cgroup with all in it.
        self.cg = sandbox.base_cgroup.child(f"slot-{self.uid}-{secrets.token_hex(4)}")

    def argv(self, ctl_fd: int) -> list[str]:
        argv = ["bwrap", "--die-with-parent", "--new-session", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--unshare-pid", "--as-pid-1", "--hostname", "sandbox"]
        for cap in CAPS:
            argv += ["--cap-add", cap]
        _bind_system(argv)
        argv += ["--ro-bind", str(self.sb.etc_dir / "passwd"), "/etc/passwd",
                 "--ro-bind", str(self.sb.etc_dir / "group"), "/etc/group"]
        for root in python_roots():
            argv += ["--ro-bind", root, root]
        for pkg in packages(self.sb.program):
            argv += ["--ro-bind", str(self.sb.project_root / pkg), f"{CODE_DIR}/{pkg}"]
        argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        kind = self.sb.compile_cache.kind_for(self.pool_name) if self.sb.compile_cache else None
        if kind is not None:  # the trusted layers this pool's runs may see, read-only; each run hides them again
            argv += ["--ro-bind", str(self.sb.compile_cache.kind_dir(kind)), LAYERS_DIR]
        for inside, host in self.cgroup_mounts().items():
            argv += ["--bind", str(host), inside]
        argv[1:1] = _parent_dirs(argv)
        argv += ["--remount-ro", "/", "--chdir", "/tmp", "--clearenv"]
        for key, value in worker_env(self.sb.program).items():
            argv += ["--setenv", key, value]
        from sandbox.worker import bootstrap

        argv += [interpreter(), "-I", "-c", bootstrap(CODE_DIR), "--ctl-fd", str(ctl_fd),
                 "--program", self.sb.program.module]
        return argv

    def cgroup_mounts(self) -> dict[str, Path]:
        if self.cg.version == 2:
            return {"/sys/fs/cgroup": self.cg.dirs[""]}
        return {f"/sys/fs/cgroup/{c}": d for c, d in self.cg.dirs.items()}

    def launch(self) -> socket.socket:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            argv = self.argv(theirs.fileno())
            self.proc = launcher.call(lambda: subprocess.Popen(
                argv, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                start_new_session=True))
        finally:
            theirs.close()
        return mine

    def watch(self, limits: Limits) -> RunWatch:
        run = self.cg.child(f"run-{self.runs}")
        run.set_limits(limits.memory_mb * MiB, limits.pids, self.sb.settings.cpus)
        return CgroupWatch(run)

    def request_fields(self, watch: RunWatch, limits: Limits) -> dict:
        inside = {str(h): i for i, h in self.cgroup_mounts().items()}
        assert isinstance(watch, CgroupWatch)  # made by self.watch
        run = watch.cg
        procs = [f"{inside[str(f.parent.parent)]}/{f.parent.name}/cgroup.procs" for f in run.procs_files()]
        fields = {"uid": self.uid, "cgroup_procs": procs, "hidden_mounts": sorted(inside.values(), reverse=True),
                  "tmp_mb": max(256, limits.memory_mb // 2),
                  "env": {**self.sb.program.environment(), "PYTHONPATH": CODE_DIR}}
        cache = self.sb.compile_cache
        if cache is not None and cache.kind_for(self.pool_name) is not None:
            fields["hidden_mounts"].append(LAYERS_DIR)
            found = cache.layer_for(self.pool_name)
            if found is not None:  # a complete layer: an overlay of it at the run's cache folder, pickle caches on
                fields["cache_layer"] = f"{LAYERS_DIR}/{found[0].name}"
                fields["env"].update(cache.run_env(found[1]))
        return fields

    def terminate(self) -> None:
        self.kill_process_group()
        self.cg.kill_all()
        self.cg.remove()
        self.log.close()


class BwrapSandbox(WarmSandbox):
    """Warm bubblewrap workers; `PRACTICE_POOL_SIZE` of them, each reused for `PRACTICE_WORKER_RUNS` runs."""

    name = "bwrap"

    def __init__(self, program: Program, pool_size: int | None = None, max_runs: int | None = None,
                 settings: SandboxSettings | None = None, compile_cache: CompileCache | None = None):
        reason = available()
        if reason:
            raise SandboxError(f"sandbox 'bwrap' is unavailable: {reason}")
        self.settings = settings or SandboxSettings()
        if compile_cache is not None:
            compile_cache.prepare()
            self.compile_cache = compile_cache
        super().__init__(program, pool_size or self.settings.pool_size, max_runs or self.settings.worker_runs)
        self.project_root = Path(CODE_ROOT)
        self.base_cgroup = self.settings.base_cgroup()
        self.etc_dir = self.settings.etc_dir()

    def facts(self) -> dict[str, str | int | float]:
        return {"version": self.settings.bwrap_version(), "pool": self.pool_size, "cgroup": self.base_cgroup.version,
                "uids": self.settings.uid_base, "cpus": f"{self.settings.cpus:g}"}

    def new_worker(self, slot: int) -> Worker:
        return BwrapWorker(slot, self)
